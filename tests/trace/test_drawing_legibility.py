"""Drawings people can read: text at least 11 px, never scaled down, a legend, one edge per use,
local factors on scalar edges, tensors labelled by shape and norm."""

from __future__ import annotations

import re

import torch

import gradarg
from gradarg.trace.draw.drawing import LEGEND


def chain():
    a = torch.tensor(5.0, requires_grad=True)
    b = a * a
    c = 8 * b
    d = torch.log(c)
    return {"a": a, "b": b, "c": c, "d": d}


def font_sizes(svg: str) -> list[float]:
    sizes = [float(v) for v in re.findall(r'font-size="([0-9.]+)"', svg)]
    sizes += [float(v) for v in re.findall(r"font-size:\s*([0-9.]+)px", svg)]
    return sizes


def test_every_font_size_in_the_svg_is_at_least_11px():
    t = chain()
    svg = gradarg.trace_backward(t["d"], names=t).to_svg()
    sizes = font_sizes(svg)
    assert sizes and min(sizes) >= 11


def test_the_svg_keeps_its_natural_size_and_scrolls_in_a_frame():
    t = chain()
    trace = gradarg.trace_backward(t["d"], names=t)
    svg = trace.to_svg()
    assert "max-width:100%" not in svg  # a scaled-down svg shrinks its text
    width = float(re.search(r'<svg[^>]* width="([0-9.]+)"', svg).group(1))
    view_w = float(re.search(r'viewBox="[-0-9.]+ [-0-9.]+ ([0-9.]+)', svg).group(1))
    assert abs(width - view_w) <= 1  # one user unit per pixel
    for html in (trace._repr_html_(), trace.draw()._repr_html_()):
        assert "overflow-x:auto" in html and LEGEND in html


def test_every_frame_that_scrolls_is_a_named_tab_stop():
    """A keyboard reader reaches a drawing wider than the column and scrolls it (WCAG 2.1.1,
    axe-core's scrollable-region-focusable): every sideways-scrolling frame is focusable and a
    region named after its drawing."""
    t = chain()
    trace = gradarg.trace_backward(t["d"], names=t)
    net = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.Tanh(), torch.nn.Linear(3, 1))
    with gradarg.watch(net) as w:
        net(torch.ones(4, 2)).sum().backward()
    pages = {"trace": trace._repr_html_(), "draw": trace.draw()._repr_html_(),
             "side_by_side": gradarg.side_by_side([trace, trace], titles=["a", "b"])._repr_html_(),
             "modules": gradarg.draw_modules(w)._repr_html_(),
             "player": trace.player()._repr_html_()}
    for what, page in pages.items():
        frames = re.findall(r"<div[^>]*overflow-x:auto[^>]*>", page)
        assert frames, what
        for frame in frames:
            assert 'tabindex="0"' in frame and 'role="region"' in frame, (what, frame)
            name = re.search(r'aria-label="([^"]+)"', frame)
            assert name and name.group(1).startswith("drawing: "), (what, frame)
    assert 'aria-label="drawing: backward graph of d"' in pages["trace"]


def test_the_legend_says_arrows_run_backward():
    assert "opposite to the forward pass" in LEGEND
    assert "shape and norm" in LEGEND


def test_an_input_used_twice_gets_two_edges_each_with_its_share():
    t = chain()
    svg = gradarg.trace_backward(t["d"], names=t).to_svg()
    # v -> log, log -> 8*b, 8*b -> a*a, then a*a -> a twice
    assert svg.count('class="ga-edge') == 5
    labels = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    # d = log(8 a²): dd/db = 1/b = 0.04; each use of a gets 0.04 * a = 0.2
    assert sum("= 0.2" in lab for lab in labels) == 2
    assert not any("0.2 + 0.2" in lab or "sum of" in lab for lab in labels)


def test_scalar_edges_carry_the_local_factor():
    t = chain()
    labels = re.findall(r"<text[^>]*>([^<]*)</text>",
                        gradarg.trace_backward(t["d"], names=t).to_svg())
    # log: received 1, sends 1/c = 0.005; 8*b: received 0.005, sends 0.04 (× 8); a*a: × a = 5
    assert "× 0.005 = 0.005" in labels
    assert "× 8 = 0.04" in labels
    assert labels.count("× 5 = 0.2") == 2


def test_side_by_side_keeps_natural_size_and_adds_one_legend():
    t = chain()
    tr = gradarg.trace_backward(t["d"], names=t)
    html = gradarg.side_by_side([tr, tr], titles=["one", "two"])._repr_html_()
    assert html.count(LEGEND) == 1 and "max-width:100%;height:auto" not in html
    assert min(font_sizes(html)) >= 11


def test_named_scalars_show_their_forward_value():
    t = chain()
    text = " ".join(re.findall(r"<text[^>]*>([^<]*)</text>",
                               gradarg.trace_backward(t["d"], names=t).to_svg()))
    # a = 5, b = 25, c = 200, d = log(200) = 5.298
    for s in ("a = 5", "b = a * a = 25", "c = 8 * b = 200", "d = log(c) = 5.298"):
        assert s in text, s
