"""The module drawings on the gradient-flow page: legible at a notebook's width (1000 px).

Every text of every ``svg.ga-modules`` must render at 11 px or more: the CSS font size times
the scale the browser applied to the SVG (rendered width / natural width). The SVG keeps its
natural size (no shrinking to fit); a wider one scrolls inside its frame.
"""

from __future__ import annotations

from browsing import SHOTS

PAGE = "guide/gradient-flow.html"

SIZES = """() => [...document.querySelectorAll("svg.ga-modules")].map(svg => {
  const natural = svg.width.baseVal.value;
  const scale = svg.getBoundingClientRect().width / natural;
  const sizes = [...svg.querySelectorAll("text, tspan")].map(
    t => parseFloat(getComputedStyle(t).fontSize) * scale);
  const frame = svg.parentElement;
  return {natural, scale, min: Math.min(...sizes), count: sizes.length,
          scrolls: frame.scrollWidth > frame.clientWidth,
          overflowX: getComputedStyle(frame).overflowX};
})"""


def test_module_drawing_text_is_at_least_11px_at_1000px(browser, server):
    context = browser.new_context(viewport={"width": 1000, "height": 800})
    tab = context.new_page()
    try:
        tab.goto(server + PAGE, wait_until="load")
        drawings = tab.evaluate(SIZES)
        assert drawings, "no module drawing on the page"
        for d in drawings:
            assert d["count"] > 10
            assert abs(d["scale"] - 1) < 0.01, f"SVG scaled by {d['scale']:.2f}"
            assert d["min"] >= 11, f"smallest text {d['min']:.1f} px"
            assert d["overflowX"] == "auto"  # too wide: it scrolls in its frame
        text = " ".join(tab.locator("svg.ga-modules").evaluate_all(
            "els => els.map(e => e.textContent)"))
        for expected in ("digit (call 2)", "parity.weight", "body"):
            assert expected in text, expected
        SHOTS.mkdir(parents=True, exist_ok=True)
        tab.locator("svg.ga-modules").first.screenshot(path=SHOTS / "module-drawing-1000.png")
    finally:
        tab.close()
        context.close()
