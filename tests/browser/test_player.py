"""Step through the backward pass on the built pages: buttons, arrow keys, live values, text size.

The scalar chain's player ends on a.grad = 0.4 (dd/da = 2/a at a = 5, on paper) and the vector
chain's on a.grad = [2, 1, 0.6667] (2/a at a = [1, 2, 3]).
"""

from __future__ import annotations

import pytest

PAGE = "tutorial/scalar-chain.html"
ENDS = ["a.grad = 0.4", "a.grad = [2, 1, 0.6667]"]

STATE = """root => ({count: root.querySelector('.ga-player-count').textContent,
  panel: root.querySelector('.ga-player-panel').innerText,
  live: root.querySelector('.ga-player-live').textContent,
  current: [...root.querySelectorAll('svg .ga-node.ga-current')].map(g => g.dataset.key)})"""

SIZES = """root => [...root.querySelectorAll('.ga-player-panel, .ga-player-count, button')]
  .map(e => parseFloat(getComputedStyle(e).fontSize))"""


@pytest.fixture
def tab(browser, server):
    def open_at(width: int):
        context = browser.new_context(viewport={"width": width, "height": 900})
        page = context.new_page()
        page.goto(server + PAGE, wait_until="load")
        opened.append(context)
        return page

    opened: list = []
    yield open_at
    for c in opened:
        c.close()


@pytest.mark.parametrize("which", [0, 1], ids=["scalar chain", "vector chain"])
def test_next_steps_to_the_end_and_shows_the_live_gradient(tab, which):
    page = tab(1280)
    players = page.locator(".ga-player")
    assert players.count() >= 2
    root = players.nth(which)
    first = root.evaluate(STATE)
    assert first["count"].startswith("step 1 of ")
    total = int(first["count"].rsplit(" ", 1)[1])
    assert len(first["current"]) == 1  # the first node autograd ran is highlighted
    lives = [first["live"]]
    for _ in range(total - 1):
        root.locator(".ga-player-next").click()
        lives.append(root.evaluate(STATE)["live"])
    last = root.evaluate(STATE)
    assert last["count"] == f"step {total} of {total}"
    assert ENDS[which] in last["panel"]
    assert len(set(lives)) == total, "the aria-live text changes at every step"
    root.locator(".ga-player-prev").click()
    assert root.evaluate(STATE)["count"] == f"step {total - 1} of {total}"


def test_arrow_keys_step_through(tab):
    page = tab(1280)
    root = page.locator(".ga-player").first
    root.focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert root.evaluate(STATE)["count"].startswith("step 3 of ")
    page.keyboard.press("ArrowLeft")
    assert root.evaluate(STATE)["count"].startswith("step 2 of ")
    page.keyboard.press("End")
    assert ENDS[0] in root.evaluate(STATE)["panel"]
    page.keyboard.press("Home")
    assert root.evaluate(STATE)["count"].startswith("step 1 of ")


@pytest.mark.parametrize("width", [1280, 390])
def test_player_text_is_at_least_11px(tab, width):
    page = tab(width)
    for i in range(page.locator(".ga-player").count()):
        sizes = page.locator(".ga-player").nth(i).evaluate(SIZES)
        assert sizes and min(sizes) >= 11, sizes
    overflow = page.evaluate("document.documentElement.scrollWidth - "
                             "document.documentElement.clientWidth")
    assert overflow <= 1



def test_tab_reaches_the_drawing_where_arrows_scroll_not_step(tab):
    """The drawing's frame is the player's next tab stop (it scrolls sideways when the drawing
    is wider than the column); there the arrow keys are the frame's, not the player's."""
    page = tab(390)
    root = page.locator(".ga-player").first
    root.focus()
    page.keyboard.press("Tab")
    frame = root.locator(".ga-player-drawing")
    assert frame.evaluate("f => f === document.activeElement && f.getAttribute('role')") == "region"
    page.keyboard.press("ArrowRight")
    assert root.evaluate(STATE)["count"].startswith("step 1 of ")
