"""Every page of the built site, as a reader's browser shows it."""

from __future__ import annotations

import json
import re

import pytest
from browsing import SITE, broken_links, figure_contrast, site_pages, visit_in_one_tab

PAGES = site_pages()
# The generated source pages (viewcode's "[source]" of each function): the theme around
# highlighted code, no content of ours. All of them are loaded in one tab by one test,
# test_source_pages, with the checks that apply to them.
SOURCE_PAGES = [p for p in PAGES if p.startswith("_modules/")]
# Every other page, one test per page and check. Generated index pages carry no content of
# ours; still visited for links and errors.
READER_PAGES = [p for p in PAGES if p not in SOURCE_PAGES]
CONTENT_PAGES = [p for p in READER_PAGES if not p.startswith(("genindex", "search", "py-modindex"))]
NOTEBOOK_PAGES = [p for p in CONTENT_PAGES if p.startswith(("tutorial/", "guide/"))]
TUTORIAL_PAGES = [p for p in CONTENT_PAGES if p.startswith("tutorial/")]
MIN_FIGURE_CONTRAST = 3.0  # WCAG's minimum for graphics, between a figure's ink and its ground

# Numbers the tutorial pages must show, derived by hand in the issue (not copied from a build).
KEY_NUMBERS = {
    "tutorial/scalar-chain.html": ["0.4", "0.005", "0.04", "[2, 1, 0.6667]"],
    # vec_fn at [0.5, -1], v = [1, 0.5, 2]: [-0.5, 2 + 2/e]; X W with V: V Wᵀ
    "tutorial/vjp-by-examples.html": ["200", "[-0.5, 2.736]", "[[1, 2, 0], [2.5, 0, -6]]"],
    "tutorial/why-a-vector.html": ["[0.2, 0.8]", "[0.1, 1.0, 0.0001]"],
    "tutorial/matrix-product.html": ["[[1, 3]]", "[[2, 4]]", "[[3, 7]]"],
    "tutorial/black-box.html": ["2011.14779", "0.0e+00"],
    # x ** 2 at [1, 2, 3] with v = [1, 0.1, 0.01]: vᵀJ = 2 x v = [2, 0.4, 0.06]
    "index.html": ["[2, 0.4, 0.06]"],
    # two passes over x ** 2 at [1, 2] with one-hot v: [2, 0], then 2x = [2, 4]
    "reference/cheatsheet.html": ["[2, 0]", "[2, 4]",
                                  "grad can be implicitly created only for scalar outputs"],
}


def test_site_was_built():
    assert "index.html" in PAGES, f"no site at {SITE}"
    assert set(KEY_NUMBERS) <= set(PAGES)


@pytest.mark.parametrize("page", READER_PAGES)
def test_no_console_error(visits, page):
    assert visits(page).console_errors == []


@pytest.mark.parametrize("page", READER_PAGES)
def test_no_request_leaves_localhost(visits, page):
    v = visits(page)
    assert v.foreign_requests == [], "math, fonts and scripts must be served by the site itself"
    assert v.failed_requests == []


@pytest.mark.parametrize("page", CONTENT_PAGES)
def test_math_is_typeset(visits, page):
    v = visits(page)
    assert v.mathjax_containers >= v.math_elements, "some math was not typeset by MathJax"
    assert v.mathjax_errors == 0
    for raw in ("$$", "\\(", "\\[", "\\begin{"):
        assert raw not in v.prose_text, f"raw {raw!r} left in the visible text"


def test_math_pages_have_math(visits):
    """The check above is not vacuous: the tutorial pages do typeset formulas."""
    for page in KEY_NUMBERS:
        assert visits(page).mathjax_containers > 0, page


@pytest.mark.parametrize("page", READER_PAGES)
def test_images_load(visits, page):
    assert visits(page).broken_images == []


@pytest.mark.parametrize("page", NOTEBOOK_PAGES)
def test_copy_button_copies_the_code(visits, page):
    v = visits(page)
    assert v.copy_buttons > 0
    assert v.copied is not None
    assert v.copied.strip() == v.copied_expected.strip()


@pytest.mark.parametrize("page", NOTEBOOK_PAGES)
def test_notebook_download_link(visits, browser_context, page):
    """The page downloads as a notebook of its prose and visible code only: no ".md" source
    (its hidden cells import the site's own helpers)."""
    v = visits(page)
    sources = [u for u in v.download_links if "_sources/" in u]
    assert [u for u in sources if u.endswith(".ipynb")], "no notebook download for the page"
    assert not [u for u in sources if not u.endswith(".ipynb")], sources
    resp = browser_context.request.get(sources[0])
    assert resp.ok
    nb = json.loads(resp.text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert code, "the download holds no code"
    assert "pagekit" not in resp.text() and "glue(" not in resp.text()


@pytest.mark.parametrize("page", READER_PAGES)
def test_internal_links_resolve(visits, browser_context, page):
    assert broken_links(browser_context.request, visits(page).links) == []


def test_source_pages(browser_context, server):
    """Every generated source page, in one tab: no console error, no request off localhost
    or failing, images load, links resolve (the four checks every reader page gets)."""
    assert SOURCE_PAGES, "no _modules/ pages: is sphinx.ext.viewcode still on?"
    problems = []
    for v in visit_in_one_tab(browser_context, server, SOURCE_PAGES):
        problems += [f"{v.url}: console: {e}" for e in v.console_errors]
        problems += [f"{v.url}: request off localhost: {u}" for u in v.foreign_requests]
        problems += [f"{v.url}: failed request: {u}" for u in v.failed_requests]
        problems += [f"{v.url}: broken image: {u}" for u in v.broken_images]
        problems += [f"{v.url}: {b}" for b in broken_links(browser_context.request, v.links)]
        assert v.links, f"{v.url}: no links read"
    assert problems == []


@pytest.mark.parametrize(("page", "numbers"), sorted(KEY_NUMBERS.items()))
def test_tutorial_page_shows_key_numbers(visits, page, numbers):
    text = visits(page).visible_text
    for number in numbers:
        assert number in text, f"{number} not visible on {page}"


@pytest.mark.parametrize("page", CONTENT_PAGES)
def test_no_visible_import_of_plumbing(visits, page):
    """Glue and display helpers (myst_nb, IPython) live in hidden cells, not in code boxes."""
    assert visits(page).code_imports == []


@pytest.mark.parametrize("page", CONTENT_PAGES)
def test_no_code_box_scrolls_sideways_at_1280px(visits, page):
    assert visits(page).code_overflow == [], "shorten these lines to at most 80 characters"


def test_displayed_formulas_are_measured(visits):
    # the pages that teach with displayed equations have some, each typeset with a width
    for page in ("tutorial/why-a-vector.html", "guide/whole-jacobians.html"):
        assert visits(page).formulas, page
    assert all(f["inner"] > 0 for page in CONTENT_PAGES for f in visits(page).formulas)


@pytest.mark.parametrize("page", CONTENT_PAGES)
def test_no_displayed_formula_is_wider_than_its_column_at_1280px(visits, page):
    """A reader sees the whole equation, result included, without scrolling inside it (at a
    phone's width a wide matrix may scroll in its own box)."""
    wide = [f"#{f['section']}: {f['inner']} px in {f['box']}"
            for f in visits(page).formulas if f["inner"] > f["box"] + 1]
    assert not wide, wide


@pytest.mark.parametrize("page", CONTENT_PAGES)
def test_page_does_not_scroll_sideways_at_390px(narrow_visits, page):
    """Prose, tables and figures fit a phone; only boxes that scroll themselves may be wider."""
    n = narrow_visits(page)
    assert n.foreign_requests == []
    assert n.scroll_width <= n.inner_width, n.overflowing
    assert n.overflowing == []


def test_landing_formula_shows_its_result_on_a_phone(narrow_visits):
    """The landing page opens with vᵀJ = [result]: at 390 px the result is in sight, not
    behind a sideways scroll of the formula."""
    formulas = narrow_visits("index.html").formulas
    assert formulas, "no displayed formula typeset on the landing page"
    first = formulas[0]
    assert first["inner"] <= first["box"] + 1, first


@pytest.mark.parametrize("page", TUTORIAL_PAGES)
def test_exercise_answers_present_and_collapsed(visits, page):
    answers = visits(page).answers
    assert len(answers) >= 2, "a tutorial page ends with 2-3 exercises, answers in dropdowns"
    assert [a["open"] for a in answers] == [False] * len(answers), "answers start collapsed"
    assert all(a["text"] for a in answers), "an answer dropdown is empty"


def _luminance(css_rgb: str) -> float:
    r, g, b = (int(c) / 255 for c in re.findall(r"\d+", css_rgb)[:3])
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


@pytest.mark.parametrize("page", CONTENT_PAGES)
def test_figures_in_dark_mode(visits, page):
    """After the theme switch to dark, every figure is loaded, visible and readable."""
    v = visits(page)
    assert v.theme_after_switch == "dark"
    assert _luminance(v.dark_background) < 0.05, f"background {v.dark_background} is not dark"
    assert len(v.figures_dark) == v.figures_light, "a figure disappeared in dark mode"
    for fig in v.figures_dark:
        assert fig["loaded"] and fig["visible"], fig["what"]
        assert fig["contrast"] >= MIN_FIGURE_CONTRAST, (
            f"{fig['what']}: contrast {fig['contrast']:.2f} on the dark page; give it an opaque "
            f"light background or colours that work on both")


def test_dark_mode_check_sees_figures(visits):
    """The check above is not vacuous: the site has figures and the check finds them."""
    assert sum(len(visits(p).figures_dark) for p in CONTENT_PAGES) > 0


def test_contrast_measure_flags_dark_ink_on_a_dark_page(browser_context):
    """The measure above tells a transparent black-on-dark figure from a readable one."""
    page = browser_context.new_page()
    line = '<line x1="10" y1="10" x2="190" y2="90" stroke="black" stroke-width="3"/>'
    page.set_content(
        '<body style="background:#121212;margin:0">'
        f'<svg id="bare" width="200" height="100">{line}</svg>'
        f'<svg id="backed" width="200" height="100"><rect width="200" height="100" fill="white"/>'
        f"{line}</svg></body>")
    bare = figure_contrast(page, page.query_selector("#bare"))["contrast"]
    backed = figure_contrast(page, page.query_selector("#backed"))["contrast"]
    page.close()
    assert bare < MIN_FIGURE_CONTRAST <= backed, (bare, backed)


@pytest.mark.parametrize("page", READER_PAGES)
def test_accessible(visits, page):
    """axe-core finds no WCAG 2.1 A or AA violation (light theme, 1280 px, as the page loads).
    Every reader page of the built site, the generated indexes and the search page included."""
    found = [f"{page}: {r['id']} ({r['impact']}) {r['help']}: {' | '.join(r['targets'])}"
             for r in visits(page).axe_violations]
    if found:
        pytest.fail("axe-core, WCAG 2.1 AA:\n" + "\n".join(found), pytrace=False)
