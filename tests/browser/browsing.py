"""What the browser suite needs besides fixtures: where the site is, and one visit of one page.

Run with ``nox -s browser`` after ``nox -s docs``. ``GRADARG_SITE`` points at the built HTML;
``GRADARG_CHROMIUM`` at the browser (default ``/usr/bin/chromium``). Screenshots go to
``test-artifacts/screenshots/``: each page at 1280 px in the light theme, in ``dark/`` the
same in the dark theme (both skipped with ``GRADARG_SCREENSHOTS=0``, as ``.ci/run`` does: two
full-page captures per page cost about 30 s and nobody reads them there), in ``390/`` a page
that overflows a phone's width.

Each page is loaded twice: once at 1280 px (console, links, copy button, code boxes,
exercises, axe-core's WCAG 2.1 A/AA rules, the explorer, then the switch to dark mode and its
figures) and once at 390 px (horizontal overflow). axe-core comes from npm:
``npm ci --prefix tests/browser`` (``nox -s browser`` and ``nox -s site`` run it) installs the
version ``tests/browser/package-lock.json`` pins.
"""

from __future__ import annotations

import base64
import http.server
import os
import random
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urldefrag, urlparse

ROOT = Path(__file__).resolve().parents[2]
SITE = Path(os.environ.get("GRADARG_SITE", ROOT / "docs" / "_build" / "html"))
CHROMIUM = os.environ.get("GRADARG_CHROMIUM", "/usr/bin/chromium")
# axe-core, pinned by tests/browser/package-lock.json; nox -s browser / site run npm ci for it
AXE = ROOT / "tests" / "browser" / "node_modules" / "axe-core" / "axe.min.js"
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]  # WCAG 2.1 A and AA
SHOTS = ROOT / "test-artifacts" / "screenshots"
FULL_PAGE_SHOTS = os.environ.get("GRADARG_SCREENSHOTS", "1") != "0"
NARROW = {"width": 390, "height": 844}  # a phone
EXPLORER_RUNS = 5  # random upstream gradients typed into each explorer
FLAGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-default-apps", "--disable-extensions",
]


def site_pages() -> list[str]:
    """Every HTML page of the built site, relative to its root."""
    if not (SITE / "index.html").exists():
        return []
    pages = (p.relative_to(SITE).as_posix() for p in SITE.rglob("*.html"))
    return sorted(p for p in pages if not p.startswith("_static/"))  # theme templates


@dataclass
class Visit:
    """What one page load showed."""

    url: str
    console_errors: list[str] = field(default_factory=list)
    foreign_requests: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    math_elements: int = 0
    mathjax_containers: int = 0
    mathjax_errors: int = 0
    visible_text: str = ""
    prose_text: str = ""  # visible text outside code blocks
    broken_images: list[str] = field(default_factory=list)
    images: int = 0
    links: list[str] = field(default_factory=list)
    ids: set[str] = field(default_factory=set)
    copy_buttons: int = 0
    copied: str | None = None
    copied_expected: str | None = None
    download_links: list[str] = field(default_factory=list)
    code_imports: list[str] = field(default_factory=list)  # visible imports of plumbing
    code_overflow: list[str] = field(default_factory=list)  # code boxes scrolling at 1280 px
    # displayed formulas: typeset width and the width their box offers, px, and the section
    formulas: list[dict] = field(default_factory=list)
    answers: list[dict] = field(default_factory=list)  # {"open": bool, "text": str}
    explorers: list[dict] = field(default_factory=list)  # data, and what each typed v showed
    theme_after_switch: str = ""  # data-theme on <html> after the switch
    dark_background: str = ""  # the body's computed background colour then
    figures_light: int = 0
    figures_dark: list[dict] = field(default_factory=list)
    # axe-core's WCAG 2.1 AA violations, light theme at 1280 px: {id, impact, help, targets}
    axe_violations: list[dict] = field(default_factory=list)


@dataclass
class NarrowVisit:
    """What one page load at a phone's width (390 px) showed."""

    url: str
    foreign_requests: list[str] = field(default_factory=list)
    scroll_width: int = 0
    inner_width: int = 0
    overflowing: list[str] = field(default_factory=list)  # content sticking out of the page
    # displayed formulas: typeset width and the width their box offers, px, and the section
    formulas: list[dict] = field(default_factory=list)


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest output readable
        pass



def _record(page, server: str, current) -> None:
    """Block and record requests off localhost; record console errors and failed requests.
    ``current()`` is the visit (Visit or NarrowVisit) the tab is on."""
    host = urlparse(server).netloc

    def on_request(route):
        url = route.request.url
        parsed = urlparse(url)
        if parsed.scheme in ("data", "blob", "about") or parsed.netloc == host:
            route.continue_()
        else:
            current().foreign_requests.append(url)
            route.abort()

    def on_console(message):
        v = current()
        if message.type == "error" and isinstance(v, Visit):
            v.console_errors.append(message.text)

    def on_page_error(error):
        v = current()
        if isinstance(v, Visit):
            v.console_errors.append(f"pageerror: {error}")

    def on_failed(request):
        v = current()
        if isinstance(v, Visit) and urlparse(request.url).netloc == host:
            v.failed_requests.append(request.url)

    page.route("**/*", on_request)
    page.on("console", on_console)
    page.on("pageerror", on_page_error)
    page.on("requestfailed", on_failed)
    # the requests still open, for quiet(): Playwright's "networkidle" once waited 90 s on a
    # loaded CI machine (2026-11-30, questions/jacobians.html) without saying what it waited on
    pending: dict[object, str] = {}
    _PENDING[id(page)] = pending
    page.on("request", lambda r: pending.__setitem__(r, r.url))
    page.on("requestfinished", lambda r: pending.pop(r, None))
    page.on("requestfailed", lambda r: pending.pop(r, None))


_PENDING: dict[int, dict[object, str]] = {}


def quiet(page, timeout: float = 90.0, still: float = 0.5) -> None:
    """Wait until no request of ``page`` has been open for ``still`` seconds (what the copy
    button and clipboard checks need: the page's scripts and fonts loaded).  A TimeoutError
    after ``timeout`` seconds names the requests still open."""
    pending = _PENDING[id(page)]
    start = last_busy = time.monotonic()
    while True:
        now = time.monotonic()
        if pending:
            last_busy = now
        elif now - last_busy >= still:
            return
        if now - start > timeout:
            raise TimeoutError(f"requests still open after {timeout:.0f} s: "
                               f"{sorted(set(pending.values()))}")
        page.wait_for_timeout(50)


def _load(page, v, idle: bool = True) -> None:
    """Go to ``v.url`` in ``page``; wait for the load event and MathJax, then for the network
    to be quiet for 500 ms (``idle``: what the copy button and clipboard checks need) or for
    the fonts (layout measurements need only those)."""
    page.goto(v.url, wait_until="load")
    page.wait_for_function(
        "() => !window.MathJax || (window.MathJax.startup && window.MathJax.startup.promise)",
        timeout=20_000,
    )
    page.evaluate("() => window.MathJax && MathJax.startup ? MathJax.startup.promise : null")
    if idle:
        quiet(page)
    else:
        page.evaluate("() => document.fonts.ready.then(() => null)")


def _open(context, server: str, rel: str, v, idle: bool = True) -> object:
    """A new tab on ``rel``: requests off localhost are blocked and recorded, MathJax done."""
    page = context.new_page()
    _record(page, server, lambda: v)
    _load(page, v, idle)
    return page


_IMAGES_AND_LINKS = """() => ({
  images: Array.from(document.images).map(i => [i.src, i.complete && i.naturalWidth > 0]),
  links: Array.from(document.querySelectorAll('a[href]')).map(a => a.href),
})"""


def visit_in_one_tab(context, server: str, rels: list[str]) -> list[Visit]:
    """Load the pages one after the other in a single tab and record what ``visit_page``
    records for every page (console errors, requests that failed or left localhost, broken
    images, links), without its checks of our content (copy button, code boxes, exercises,
    explorers, dark mode). For the generated source pages (``_modules/``): the theme's
    pages, with no content of ours, that readers rarely open."""
    page = context.new_page()
    done: list[Visit] = []
    _record(page, server, lambda: done[-1])
    for rel in rels:
        v = Visit(url=server + rel)
        done.append(v)
        _load(page, v, idle=False)
        info = page.evaluate(_IMAGES_AND_LINKS)
        v.images = len(info["images"])
        v.broken_images = [src for src, ok in info["images"] if not ok]
        v.links = sorted({link for link in info["links"] if link.startswith(server)})
    quiet(page)  # what the last page still loads
    page.close()
    return done


_FETCHED: dict[str, tuple[bool, str, frozenset[str]]] = {}
_ID = re.compile(r'\bid="([^"]*)"')


def broken_links(request, links: list[str]) -> list[str]:
    """The links among ``links`` (on the site) that do not resolve: a page that does not load
    or has no element with the link's #anchor, a file that does not exist. Each target is
    fetched once per test run (``request``: a Playwright APIRequestContext)."""
    broken = []
    for link in links:
        base, frag = split_url(link)
        path = urlparse(base).path
        is_page = path.endswith(("/", ".html")) or "." not in path.rsplit("/", 1)[-1]
        if base not in _FETCHED:
            if is_page:
                resp = request.get(base)
                ids = frozenset(_ID.findall(resp.text())) if resp.ok else frozenset()
                _FETCHED[base] = (resp.ok, f"{resp.status}", ids)
            else:
                resp = request.head(base)
                _FETCHED[base] = (resp.ok, f"{resp.status}", frozenset())
        ok, status, ids = _FETCHED[base]
        if not ok:
            broken.append(f"{link} -> {status}")
        elif is_page and frag and base.endswith(".html") and frag not in ids:
            broken.append(f"no anchor {link}")
    return broken


def visit_page(context, server: str, rel: str) -> Visit:
    v = Visit(url=server + rel)
    page = _open(context, server, rel, v)
    info = page.evaluate(
        """() => ({
          math: document.querySelectorAll('.math, span.math, div.math').length,
          mjx: document.querySelectorAll('mjx-container').length,
          mjxErrors: document.querySelectorAll('mjx-merror').length,
          text: document.body.innerText,
          prose: (() => { const c = document.body.cloneNode(true);
                          c.querySelectorAll('pre, code, .highlight').forEach(e => e.remove());
                          document.body.appendChild(c); c.style.display = 'block';
                          const t = c.innerText; c.remove(); return t; })(),
          images: Array.from(document.images).map(i => [i.src, i.complete && i.naturalWidth > 0]),
          links: Array.from(document.querySelectorAll('a[href]')).map(a => a.href),
          ids: Array.from(document.querySelectorAll('[id]')).map(e => e.id),
          copy: document.querySelectorAll('button.copybtn').length,
          downloads: Array.from(document.querySelectorAll('a.btn-download-source-button, a.btn-download-notebook-button, a[download]')).map(a => a.href),
        })"""
    )
    v.math_elements, v.mathjax_containers, v.mathjax_errors = info["math"], info["mjx"], info["mjxErrors"]
    v.visible_text = info["text"]
    v.prose_text = info["prose"]
    v.images = len(info["images"])
    v.broken_images = [src for src, ok in info["images"] if not ok]
    v.links = sorted({link for link in info["links"] if link.startswith(server)})
    v.ids = set(info["ids"])
    v.copy_buttons = info["copy"]
    v.download_links = info["downloads"]
    if v.copy_buttons:
        # the first code box a reader sees (a collapsed "show code" box is not visible)
        box = page.locator("div.highlight:visible:has(button.copybtn)").first
        v.copied_expected = box.locator("pre").first.inner_text()
        button = box.locator("button.copybtn").first
        button.scroll_into_view_if_needed()
        box.hover()
        button.click(force=True)
        page.wait_for_timeout(200)
        v.copied = page.evaluate("() => navigator.clipboard.readText()")
    _read_content(page, v)
    v.axe_violations = run_axe(page)
    if FULL_PAGE_SHOTS:
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / _shot_name(rel)), full_page=True)
    _type_into_explorers(page, v, rel)
    _switch_to_dark(page, v, rel)
    page.close()
    return v


# preload: false. axe's preload fetches every stylesheet again to read its CSS rules, and
# resolves the theme's `@import "../basic.css"` (in _static/styles/theme.css) against the page
# instead of the sheet: a 404 on /basic.css and a console error on every page. What the preload
# serves is css-orientation-lock (WCAG 1.3.4) alone, and no stylesheet of the site has an
# orientation media query.
_RUN_AXE = """async (tags) => {
  const result = await axe.run(document, {runOnly: {type: 'tag', values: tags},
                                          resultTypes: ['violations'], preload: false});
  return result.violations.map(r => ({
    id: r.id, impact: r.impact, help: r.help,
    targets: r.nodes.map(n => n.target.join(' ')),
  }));
}"""


def run_axe(page) -> list[dict]:
    """axe-core's WCAG 2.1 A and AA violations on the page as it is now, each
    ``{"id", "impact", "help", "targets"}`` (``targets``: a CSS selector per failing element).
    About a second a page."""
    if not AXE.exists():
        raise RuntimeError(f"{AXE} missing: npm ci --prefix tests/browser (nox -s browser does)")
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    return page.evaluate(_RUN_AXE, AXE_TAGS)


def _shot_name(rel: str, suffix: str = ".png") -> str:
    return rel.replace("/", "__").removesuffix(".html") + suffix


# Code boxes as the brief of issue 9 names them; the content is the article, not the theme.
_CODE_BOXES = "article div.highlight pre, article .cell_input"
_READ_CONTENT = r"""(sel) => {
  const boxes = Array.from(document.querySelectorAll(sel));
  const plumbing = /^[ \t]*(from[ \t]+(myst_nb|IPython)\b|import[ \t]+(myst_nb|IPython)\b)/m;
  const longest = t => t.split('\n').reduce((a, b) => b.length > a.length ? b : a, '');
  return {
    imports: boxes.map(b => b.textContent).filter(t => plumbing.test(t))
                  .map(t => t.match(plumbing)[0].trim()),
    overflow: boxes.filter(b => b.scrollWidth > b.clientWidth)
                   .map(b => `${b.scrollWidth}>${b.clientWidth} px: ${longest(b.textContent)}`),
    formulas: Array.from(document.querySelectorAll('article mjx-container[display="true"]'))
      .map(m => ({inner: Math.round(m.firstElementChild ?
                                    m.firstElementChild.getBoundingClientRect().width : 0),
                  box: Math.round(m.clientWidth),
                  section: m.closest('section') ? m.closest('section').id : ''})),
    answers: Array.from(document.querySelectorAll(
        'article details.answer, article .answer > details, article .answer details'))
      .filter((d, i, all) => all.indexOf(d) === i)
      .map(d => { const c = d.cloneNode(true); c.querySelectorAll('summary').forEach(s => s.remove());
                  return {open: d.open, text: c.textContent.trim()}; }),
  };
}"""


def _read_content(page, v: Visit) -> None:
    """Plumbing imports and horizontal scrolling in code boxes; the widths of displayed formulas;
    the exercises' answers."""
    info = page.evaluate(_READ_CONTENT, _CODE_BOXES)
    v.code_imports, v.code_overflow, v.answers = info["imports"], info["overflow"], info["answers"]
    v.formulas = info["formulas"]


def explorer_vs(rel: str, sizes: list[int]) -> list[list[list[str]]]:
    """The upstream gradients typed into a page's explorers, as the keys pressed (seeded)."""
    rng = random.Random(f"gradarg-explorer:{rel}")
    return [
        [[f"{rng.uniform(-10, 10):.{rng.choice((1, 2, 3))}f}" for _ in range(n)]
         for _ in range(EXPLORER_RUNS)]
        for n in sizes
    ]


_READ_EXPLORER = """(root) => ({
  cells: Array.from(root.querySelectorAll('[data-row]')).map(
    c => [c.dataset.row, +c.dataset.col, c.textContent.trim()]),
  live: root.querySelector('[aria-live]').textContent.trim(),
  focus: document.activeElement && document.activeElement.dataset
    ? (document.activeElement.dataset.label || null) : null,
})"""


def _type_into_explorers(page, v: Visit, rel: str) -> None:
    """Type seeded random ``v``s into every explorer with the keyboard; record what it shows."""
    roots = page.locator(".gradarg-explorer")
    count = roots.count()
    if not count:
        return
    sizes = [roots.nth(k).locator("input").count() for k in range(count)]
    for k, runs in enumerate(explorer_vs(rel, sizes)):
        root = roots.nth(k)
        data = root.evaluate("r => Object.assign({}, r.dataset)")
        boxes = root.locator("input.gradarg-explorer-v")
        labels = [boxes.nth(i).get_attribute("data-label") for i in range(boxes.count())]
        shown = []
        for typed in runs:
            boxes.first.focus()
            focus_path = []
            for i, text in enumerate(typed):
                page.keyboard.press("Control+A")
                page.keyboard.press("Backspace")
                page.keyboard.type(text)
                focus_path.append(root.evaluate(_READ_EXPLORER)["focus"])
                if i + 1 < len(typed):
                    page.keyboard.press("Tab")  # the next entry of v
            shown.append({**root.evaluate(_READ_EXPLORER), "typed": typed, "focus": focus_path})
        v.explorers.append({"data": data, "labels": labels, "runs": shown})


_SET_DARK = """() => {
  // What the theme's switcher does (pydata-sphinx-theme setTheme): data-mode and data-theme
  // on <html>, remembered in localStorage under "mode" and "theme".
  localStorage.setItem('mode', 'dark');
  localStorage.setItem('theme', 'dark');
  document.documentElement.dataset.mode = 'dark';
  document.documentElement.dataset.theme = 'dark';
}"""

# Figures of the content: images, and inline SVG that is not an icon or typeset math.
_FIGURES = """() => Array.from(document.querySelectorAll('article img, article svg')).filter(e => {
  if (e.closest('mjx-container, button, summary, a.headerlink, .sd-octicon, svg svg')) return false;
  if (e.tagName.toLowerCase() === 'svg' && e.parentElement.closest('svg')) return false;
  const r = e.getBoundingClientRect();
  return r.width >= 40 && r.height >= 40;
})"""

_FIGURE_STATE = """(e) => {
  const s = getComputedStyle(e), r = e.getBoundingClientRect();
  return {
    what: e.tagName.toLowerCase() === 'img' ? e.getAttribute('src') : 'inline svg',
    loaded: e.tagName.toLowerCase() !== 'img' || (e.complete && e.naturalWidth > 0),
    visible: r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && +s.opacity > 0.5
             && e.checkVisibility({checkOpacity: true, checkVisibilityCSS: true}),
  };
}"""

# Luminance contrast inside a screenshot of the figure as the reader sees it (composited on
# the page's background): ratio between the median pixel and the 99.8th percentile of the
# pixels farthest from it. Black lines on a transparent figure over a dark page score ~1.
_CONTRAST = """async (b64) => {
  const img = new Image();
  img.src = 'data:image/png;base64,' + b64;
  await img.decode();
  const c = document.createElement('canvas');
  c.width = img.naturalWidth; c.height = img.naturalHeight;
  const ctx = c.getContext('2d');
  ctx.drawImage(img, 0, 0);
  const d = ctx.getImageData(0, 0, c.width, c.height).data;
  const lin = x => { x /= 255; return x <= 0.04045 ? x / 12.92 : Math.pow((x + 0.055) / 1.055, 2.4); };
  const lut = Array.from({length: 256}, (_, i) => lin(i));
  const n = d.length / 4, L = new Float64Array(n);
  for (let i = 0; i < n; i++)
    L[i] = 0.2126 * lut[d[4*i]] + 0.7152 * lut[d[4*i+1]] + 0.0722 * lut[d[4*i+2]];
  const sorted = Float64Array.from(L).sort();
  const med = sorted[Math.floor(n / 2)];
  const ratio = Float64Array.from(L, l => (Math.max(l, med) + 0.05) / (Math.min(l, med) + 0.05));
  ratio.sort();
  return {median: med, contrast: ratio[Math.min(n - 1, Math.floor(0.998 * n))]};
}"""


def figure_contrast(page, element) -> dict:
    """``{"median", "contrast"}`` of a screenshot of ``element`` as the page shows it."""
    element.scroll_into_view_if_needed()
    shot = base64.b64encode(element.screenshot()).decode()
    return page.evaluate(_CONTRAST, shot)


def _switch_to_dark(page, v: Visit, rel: str) -> None:
    """Dark theme as the switcher sets it; every figure loaded, visible and readable on it."""
    v.figures_light = page.evaluate(f"() => ({_FIGURES})().length")
    page.evaluate(_SET_DARK)
    page.wait_for_timeout(150)  # let the new colours apply before measuring
    v.theme_after_switch, v.dark_background = page.evaluate(
        "() => [document.documentElement.dataset.theme, getComputedStyle(document.body)"
        ".backgroundColor]")
    figures = page.evaluate_handle(_FIGURES).get_properties()
    for _, handle in sorted((int(k), h) for k, h in figures.items()):
        element = handle.as_element()
        state = element.evaluate(_FIGURE_STATE)
        if state["visible"]:
            state.update(figure_contrast(page, element))
        v.figures_dark.append(state)
    if FULL_PAGE_SHOTS:
        (SHOTS / "dark").mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "dark" / _shot_name(rel, ".jpg")), full_page=True,
                        type="jpeg", quality=80)


_NARROW = """() => {
  const W = window.innerWidth;
  const scrolls = e => { for (let a = e.parentElement; a && a !== document.body; a = a.parentElement) {
      const o = getComputedStyle(a).overflowX;
      if (o === 'auto' || o === 'scroll' || o === 'hidden' || o === 'clip') return true; }
    return false; };
  const out = [];
  for (const e of document.querySelectorAll('main *')) {
    const r = e.getBoundingClientRect();
    if (r.width === 0 || r.right <= W + 1 || scrolls(e)) continue;
    if (!e.checkVisibility({checkVisibilityCSS: true})) continue;
    out.push(`<${e.tagName.toLowerCase()} class="${e.getAttribute('class') || ''}"> right edge `
             + `${Math.round(r.right)} px: ${(e.textContent || '').trim().slice(0, 60)}`);
    if (out.length >= 8) break;
  }
  const formulas = Array.from(document.querySelectorAll('article mjx-container[display="true"]'))
    .map(m => ({inner: Math.round(m.firstElementChild ?
                                  m.firstElementChild.getBoundingClientRect().width : 0),
                box: Math.round(m.clientWidth),
                section: m.closest('section') ? m.closest('section').id : ''}));
  return {sw: document.documentElement.scrollWidth, W, out, formulas};
}"""


def visit_narrow(context, server: str, rel: str) -> NarrowVisit:
    """Load ``rel`` at a phone's width; measure horizontal overflow of the page."""
    v = NarrowVisit(url=server + rel)
    page = _open(context, server, rel, v, idle=False)
    info = page.evaluate(_NARROW)
    v.scroll_width, v.inner_width, v.overflowing = info["sw"], info["W"], info["out"]
    v.formulas = info["formulas"]
    if v.scroll_width > v.inner_width or v.overflowing:  # a picture of the failure only
        (SHOTS / "390").mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "390" / _shot_name(rel)), full_page=True)
    page.close()
    return v


def split_url(url: str) -> tuple[str, str]:
    base, frag = urldefrag(url)
    return base, frag
