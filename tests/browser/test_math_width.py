"""Displayed formulas fit their column at 1280 px: a reader sees the whole equation, result
included, without scrolling inside it. (At phone width a wide matrix may scroll in its own box;
the page itself never scrolls sideways, which test_site checks.)"""

from __future__ import annotations

import pytest
from browsing import site_pages

WIDTH = 1280
SKIP = {"genindex.html", "search.html", "py-modindex.html"}

# every typeset display formula: its rendered width against the width its box offers
WIDTHS = """() => [...document.querySelectorAll('mjx-container[display="true"]')].map(m => {
  const inner = m.firstElementChild ? m.firstElementChild.getBoundingClientRect().width : 0;
  const section = m.closest('section');
  return {inner: Math.round(inner), box: Math.round(m.clientWidth),
          section: section ? section.id : ''};
})"""


@pytest.fixture(scope="module")
def formulas(browser, server):
    context = browser.new_context(viewport={"width": WIDTH, "height": 800})
    tab = context.new_page()
    out = {}
    for rel in site_pages():
        if rel in SKIP:
            continue
        tab.goto(server + rel, wait_until="load")
        # MathJax typesets after load; its startup promise resolves when it is done
        tab.evaluate("() => window.MathJax?.startup?.promise?.then(() => true) ?? true")
        out[rel] = tab.evaluate(WIDTHS)
    context.close()
    return out


def test_formulas_were_measured(formulas):
    # the pages that teach with displayed equations have some
    assert formulas.get("tutorial/why-a-vector.html")
    assert formulas.get("guide/whole-jacobians.html")
    assert all(f["inner"] > 0 for fs in formulas.values() for f in fs)


def test_every_displayed_formula_fits_its_column_at_1280px(formulas):
    wide = [f"{rel} #{f['section']}: {f['inner']} px in {f['box']}"
            for rel, fs in formulas.items() for f in fs if f["inner"] > f["box"] + 1]
    assert not wide, wide
