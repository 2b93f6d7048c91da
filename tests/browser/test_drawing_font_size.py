"""Backward-graph drawings stay readable on a laptop and on a phone.

On every page with a drawing (``svg.ga-trace``), at 1280 px and at 390 px viewport widths: every
text renders at 11 px or more (its CSS font size times the scale the browser applied to the SVG),
the page itself never scrolls sideways (a wide drawing scrolls inside its frame), and a legend
follows the drawing.
"""

from __future__ import annotations

import pytest

PAGES = [
    "tutorial/scalar-chain.html",
    "tutorial/matrix-product.html",
    "tutorial/black-box.html",
    "guide/missing-gradients.html",
    "guide/nan-gradients.html",
]

MEASURE = """() => {
  const svgs = [...document.querySelectorAll("svg.ga-trace")];
  const sizes = svgs.flatMap(svg => {
    const scale = svg.getBoundingClientRect().width / svg.width.baseVal.value;
    return [...svg.querySelectorAll("text")].map(
      t => parseFloat(getComputedStyle(t).fontSize) * scale);
  });
  const doc = document.documentElement;
  return {count: svgs.length, min: Math.min(...sizes),
          pageOverflow: doc.scrollWidth - doc.clientWidth,
          legends: document.querySelectorAll(".ga-legend").length};
}"""


@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize("page", PAGES)
def test_drawing_text_is_at_least_11px(browser, server, page, width):
    context = browser.new_context(viewport={"width": width, "height": 800})
    tab = context.new_page()
    try:
        tab.goto(server + page, wait_until="load")
        found = tab.evaluate(MEASURE)
        if found["count"] == 0:
            pytest.skip(f"no backward-graph drawing on {page}")
        assert found["min"] >= 11, f"smallest drawing text {found['min']:.1f} px at {width} px"
        assert found["pageOverflow"] <= 1, f"the page scrolls sideways by {found['pageOverflow']}"
        assert found["legends"] >= 1
    finally:
        tab.close()
        context.close()
