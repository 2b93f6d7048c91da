"""The backward-graph drawings: inline SVG (not images), the expected numbers in their text, and
text readable against the background in the theme's light and dark mode."""

from __future__ import annotations

import pytest
from browsing import SHOTS

# Numbers derived by hand, not copied from a build:
#   scalar chain a = 5: ∂d/∂c = 1/(8·25) = 0.005, ∂d/∂b = 8/200 = 0.04, each edge b -> a carries
#   a·0.04 = 0.2 (local factor a = 5), a.grad = 0.4;  x @ M with M = [[1, 2], [3, 4]]: v Mᵀ = [[1, 3]], [[2, 4]], [[3, 7]];
#   sqrt at 0 sends 1/(2·0) = inf, times 2(p - q) = 0 gives p.grad = [nan, nan];
#   w = [1, -2, 3], h = 2w, loss = sum(h²): h receives 2h = 4w = [4, -8, 12], w.grad = 8w.
DRAWINGS = {
    "tutorial/scalar-chain.html": ["0.005", "× 8 = 0.04", "× 5 = 0.2", ".grad = 0.4", "c = 8 * b"],
    "tutorial/matrix-product.html": ["[[1, 3]]", "[[2, 4]]", "[[3, 7]]", "y = x @ M"],
    "tutorial/black-box.html": ["black box", "gen_out"],
    "guide/missing-gradients.html": ["received [4, -8, 12]", ".grad = [8, -16, 24]"],
    "guide/nan-gradients.html": ["first appears here", "inf", ".grad = [nan, nan]"],
}

CONTRAST = """() => {
  const rgb = s => (s.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => {
    const f = c => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const background = el => {
    for (; el; el = el.parentElement) {
      const c = rgb(getComputedStyle(el).backgroundColor);
      if (c.length >= 3 && (c.length < 4 || c[3] > 0.5)) return c;
    }
    return [255, 255, 255];
  };
  return [...document.querySelectorAll("svg.ga-trace")].map(svg => {
    const text = svg.querySelector(".ga-node text");       // node labels: currentColor
    const a = lum(rgb(getComputedStyle(text).fill)), b = lum(background(svg));
    return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
  });
}"""


@pytest.mark.parametrize("mode", ["light", "dark"])
@pytest.mark.parametrize(("page", "numbers"), sorted(DRAWINGS.items()))
def test_drawings_are_inline_svg_with_their_numbers(browser_context, server, page, numbers,
                                                    mode):
    tab = browser_context.new_page()
    try:
        tab.goto(server + page, wait_until="load")
        tab.evaluate(f"document.documentElement.dataset.theme = '{mode}'")
        assert tab.evaluate("document.documentElement.dataset.theme") == mode
        svgs = tab.locator("div.cell_output svg.ga-trace")
        assert svgs.count() > 0, "no inline SVG drawing"
        assert tab.locator("div.cell_output img[src*='.svg']").count() == 0
        text = " ".join(svgs.evaluate_all("els => els.map(e => e.textContent)"))
        for number in numbers:
            assert number in text, f"{number!r} not in the drawings of {page}"
        ratios = tab.evaluate(CONTRAST)
        assert min(ratios) >= 4.5, f"text contrast {min(ratios):.2f} in {mode} mode"
        SHOTS.mkdir(parents=True, exist_ok=True)
        svgs.first.screenshot(path=SHOTS / f"drawing-{page.replace('/', '-')}-{mode}.png")
    finally:
        tab.close()


def test_a_keyboard_reader_scrolls_a_drawing_wider_than_the_column(browser_context, server):
    """The black box's drawing is wider than the column at 1280 px: its frame is a named tab
    stop, and the arrow keys scroll it."""
    tab = browser_context.new_page()
    try:
        tab.goto(server + "tutorial/black-box.html", wait_until="load")
        frame = tab.locator("div.cell_output .gradarg-trace").first
        assert frame.evaluate("f => f.scrollWidth > f.clientWidth"), "the drawing fits now"
        assert frame.get_attribute("role") == "region" and frame.get_attribute("aria-label")
        frame.focus()
        tab.keyboard.press("ArrowRight")
        tab.wait_for_function("f => f.scrollLeft > 0", arg=frame.element_handle())
    finally:
        tab.close()
