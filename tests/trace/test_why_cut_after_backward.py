"""Class: after ``backward()`` freed the saved values, a path cut inside the model is still
placed by the graph's structure.  An input that needs no gradient leaves ``None`` in its node's
``next_functions`` for as long as the graph lives, so the answer names the nodes where inputs
without history enter and the module each belongs to; the module right after the cut is among
them.  Before backward the same cut is placed from the saved values (unchanged here).

Generated: 2 to 5 linear layers with tanh between, the cut (``.detach()``, ``.data``, a block
under ``torch.no_grad()``) before layer ``j``, dropout in training mode or not, a loss with a
target or a plain sum.  Truth with torch alone: after backward, the layers below the cut have
no ``.grad``, the others have one.
"""

from __future__ import annotations

import re

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg


def run(depth: int, j: int, how: str, dropout: bool, target: bool, seed: int):
    torch.manual_seed(seed)
    layers = nn.ModuleList(nn.Linear(5, 5) for _ in range(depth))
    drop = nn.Dropout(0.3).train()
    x = torch.randn(4, 5)
    h = x
    for i, layer in enumerate(layers):
        if i == j:
            if how == "detach":
                h = h.detach()
            elif how == "data":
                h = h.data
        if how == "no_grad" and i < j:
            with torch.no_grad():
                h = torch.tanh(layer(h))
            continue
        h = torch.tanh(layer(h))
        if dropout:
            h = drop(h)
    loss = nn.functional.mse_loss(h, torch.randn(4, 5)) if target else h.sum()
    loss.backward()
    return layers, loss


@settings(max_examples=40, deadline=None)
@given(depth=st.integers(2, 5), data=st.data(), how=st.sampled_from(["detach", "data", "no_grad"]),
       dropout=st.booleans(), target=st.booleans(), seed=st.integers(0, 99))
def test_a_cut_is_placed_after_backward(depth, data, how, dropout, target, seed):
    j = data.draw(st.integers(1, depth - 1))
    layers, loss = run(depth, j, how, dropout, target, seed)
    # the truth, torch alone
    assert all(layers[i].weight.grad is None for i in range(j))
    assert all(layers[i].weight.grad is not None for i in range(j, depth))
    names = {f"layers.{i}.weight": layer.weight for i, layer in enumerate(layers)}
    for i in range(j):
        answer = str(gradarg.why_no_grad(loss, layers[i].weight, names=names))
        assert "not in" in answer
        placed = re.findall(r"in module 'layers\.(\d+)'", answer)
        assert str(j) in placed, answer
        assert not any(int(k) < j for k in placed), answer  # no module below the cut is named
