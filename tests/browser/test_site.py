"""Every page of the built site, as a reader's browser shows it."""

from __future__ import annotations

import re
from urllib.parse import urlparse

import pytest
from browsing import SITE, site_pages, split_url

PAGES = site_pages()
# Generated index pages carry no content of ours; still visited for links and errors.
CONTENT_PAGES = [p for p in PAGES if not p.startswith(("_modules/", "genindex", "search", "py-modindex"))]
NOTEBOOK_PAGES = [p for p in CONTENT_PAGES if p.startswith(("tutorial/", "guide/"))]

# Numbers the tutorial pages must show, derived by hand in the issue (not copied from a build).
KEY_NUMBERS = {
    "tutorial/scalar-chain.html": ["0.4", "0.005", "0.04", "[2, 1, 0.6667]"],
    "tutorial/vjp-by-examples.html": ["200", "[1, 1]", "[100, 100]"],
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


@pytest.mark.parametrize("page", PAGES)
def test_no_console_error(visits, page):
    assert visits(page).console_errors == []


@pytest.mark.parametrize("page", PAGES)
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


@pytest.mark.parametrize("page", PAGES)
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
    v = visits(page)
    sources = [u for u in v.download_links if "_sources/" in u]
    assert sources, "no download link for the page source"
    resp = browser_context.request.get(sources[0])
    assert resp.ok
    assert "code-cell" in resp.text(), "the download is not the notebook source"


@pytest.mark.parametrize("page", PAGES)
def test_internal_links_resolve(visits, browser_context, page):
    v = visits(page)
    for link in v.links:
        base, frag = split_url(link)
        path = urlparse(base).path
        if path.endswith(("/", ".html")) or "." not in path.rsplit("/", 1)[-1]:
            resp = browser_context.request.get(base)
            assert resp.ok, f"{link} -> {resp.status}"
            if frag and base.endswith(".html"):
                assert re.search(rf'id="{re.escape(frag)}"', resp.text()), f"no anchor {link}"
        else:
            assert browser_context.request.head(base).ok, link


@pytest.mark.parametrize(("page", "numbers"), sorted(KEY_NUMBERS.items()))
def test_tutorial_page_shows_key_numbers(visits, page, numbers):
    text = visits(page).visible_text
    for number in numbers:
        assert number in text, f"{number} not visible on {page}"
