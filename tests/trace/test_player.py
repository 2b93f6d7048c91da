"""BackwardTrace.player(): the recorded backward pass, step by step."""

from __future__ import annotations

import re

import torch

import gradarg


def scalar_chain():
    a = torch.tensor(5.0, requires_grad=True)
    b = a * a
    c = 8 * b
    d = torch.log(c)
    return {"a": a, "b": b, "c": c, "d": d}


def test_steps_follow_autograd_order_with_the_chain_rule_by_hand():
    nodes = scalar_chain()
    trace = gradarg.trace_backward(nodes["d"], names=nodes)
    player = trace.player()
    ran = trace.executed
    assert [s.key for s in player.steps[:-1]] == [n.key for n in ran]
    # arrived: 1 at d, dd/dc = 1/c = 1/200 at c, dd/db = 8/200 at b (on paper)
    assert [s.arrived for s in player.steps[:3]] == ["1", "0.005", "0.04"]
    # local derivatives: d log(c)/dc = 1/200, dc/db = 8, and a * a sends a = 5 times g per use
    assert player.steps[0].local.endswith("× 0.005")
    assert player.steps[1].local.endswith("× 8")
    assert player.steps[2].local.endswith("× 5")
    assert player.steps[-1].sent == ("a.grad = 0.4",)
    assert "0.4" in player.steps[-1].text


def test_tensor_steps_name_the_rule_and_the_shapes():
    torch.manual_seed(0)
    x = torch.randn(4, 3, requires_grad=True)
    w = torch.randn(5, 3, requires_grad=True)
    y = torch.tanh(x @ w.T).sum()
    player = gradarg.trace_backward(y, names={"x": x, "w": w, "y": y}).player()
    texts = [s.local for s in player.steps]
    assert any("tanh" in t and "(4, 5)" in t for t in texts)
    assert any("g @ Bᵀ" in t for t in texts)  # the matrix product's rule
    assert player.steps[-1].sent[0].startswith("x.grad = shape (4, 3)")


def test_html_is_self_contained_and_accessible(tmp_path):
    nodes = scalar_chain()
    player = gradarg.trace_backward(nodes["d"], names=nodes).player()
    page = player._repr_html_()
    for needed in ('aria-live="polite"', 'tabindex="0"', 'role="group"', "ga-player-next",
                   "ga-player-prev", "ga-player-play", 'data-key="0"'):
        assert needed in page
    assert not re.search(r"(src|href)=\"https?:", page)
    assert "http" not in page.split("<script>")[1]
    out = player.save(tmp_path / "player.html")
    assert (tmp_path / "player.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert out.endswith("player.html")
    assert repr(player).startswith("BackwardPlayer: 4 nodes")


def test_the_player_changes_nothing_of_the_callers_tensors():
    nodes = scalar_chain()
    trace = gradarg.trace_backward(nodes["d"], names=nodes)
    before = nodes["a"].grad.clone()
    trace.player()._repr_html_()
    assert torch.equal(nodes["a"].grad, before)
    assert nodes["a"]._backward_hooks is None or not nodes["a"]._backward_hooks
