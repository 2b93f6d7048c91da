"""What the browser suite needs besides fixtures: where the site is, and one visit of one page.

Run with ``nox -s browser`` after ``nox -s docs``. ``GRADARG_SITE`` points at the built HTML;
``GRADARG_CHROMIUM`` at the browser (default ``/usr/bin/chromium``). Screenshots go to
``test-artifacts/screenshots/``.
"""

from __future__ import annotations

import http.server
import os
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urldefrag, urlparse

ROOT = Path(__file__).resolve().parents[2]
SITE = Path(os.environ.get("GRADARG_SITE", ROOT / "docs" / "_build" / "html"))
CHROMIUM = os.environ.get("GRADARG_CHROMIUM", "/usr/bin/chromium")
SHOTS = ROOT / "test-artifacts" / "screenshots"
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


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest output readable
        pass



def visit_page(context, server: str, rel: str) -> Visit:
    page = context.new_page()
    v = Visit(url=server + rel)
    host = urlparse(server).netloc

    def on_request(route):
        url = route.request.url
        parsed = urlparse(url)
        if parsed.scheme in ("data", "blob", "about") or parsed.netloc == host:
            route.continue_()
        else:
            v.foreign_requests.append(url)
            route.abort()

    page.route("**/*", on_request)
    page.on("console", lambda m: v.console_errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: v.console_errors.append(f"pageerror: {e}"))
    page.on("requestfailed", lambda r: v.failed_requests.append(r.url)
            if urlparse(r.url).netloc == host else None)
    page.goto(v.url, wait_until="load")
    page.wait_for_function(
        "() => !window.MathJax || (window.MathJax.startup && window.MathJax.startup.promise)",
        timeout=20_000,
    )
    page.evaluate("() => window.MathJax && MathJax.startup ? MathJax.startup.promise : null")
    page.wait_for_load_state("networkidle")
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
          downloads: Array.from(document.querySelectorAll('a.btn-download-source-button, a[download]')).map(a => a.href),
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
        v.copied_expected = page.evaluate(
            "() => document.querySelector('button.copybtn').parentElement"
            ".querySelector('pre').innerText"
        )
        button = page.locator("button.copybtn").first
        button.scroll_into_view_if_needed()
        page.locator("div.highlight").first.hover()
        button.click(force=True)
        page.wait_for_timeout(200)
        v.copied = page.evaluate("() => navigator.clipboard.readText()")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / (rel.replace("/", "__").removesuffix(".html") + ".png")),
                    full_page=True)
    page.close()
    return v


def split_url(url: str) -> tuple[str, str]:
    base, frag = urldefrag(url)
    return base, frag
