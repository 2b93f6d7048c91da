"""Class: a gradient that vanishes (or is exactly zero) before a gate initialised at zero or near it (Flamingo's
``tanh(alpha) * branch`` with ``alpha = 0``, ReZero's ``alpha * f(x)``, LayerScale's ``gamma``
of 1e-6) is told as that gate, by design small until it grows, not only as "vanishing".

The truth comes from torch alone: the gate's factor at the first step, computed by the test
from the gate's initial value (``tanh(alpha)``, ``alpha`` or ``gamma``), and the gradient of
the branch's first layer against the head's, read from ``.grad`` after the step.  Look-alikes
that must not be told as a gate: the same gates initialised large (0.5), a small parameter
added (a bias at 1e-6, not a factor) and a gate held as a plain tensor that is not a
parameter of the model.  Every kind of gate at every initial size; generated: the number of
blocks, a parameter or a plain tensor, one or two steps, and the seed.
"""

from __future__ import annotations

import math
import re

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg
from gradarg.trace.graph.nodes import Graph
from gradarg.trace.watching import zerogates

SAID = re.compile(r"the graph multiplies a branch by (\S+?)(?: \(and (\d+) more such "
                  r"product\(s\)\))?, a gate whose entries were at most")


class Block(nn.Module):
    def __init__(self, width, kind, init, plain):
        super().__init__()
        self.kind = kind
        self.f = nn.Sequential(nn.Linear(width, width), nn.GELU(), nn.Linear(width, width))
        shape = (width,) if kind == "layerscale" else (1,)
        value = torch.full(shape, init)
        self.gate = value if plain else nn.Parameter(value)

    def forward(self, x, c):
        """``x`` the stream, ``c`` the conditioning the branch reads (as a gated
        cross-attention reads the image features)."""
        if self.kind == "tanh":
            return x + torch.tanh(self.gate) * self.f(c)
        if self.kind == "added":  # a small parameter added, not a factor
            return x + self.f(c) + self.gate
        return x + self.gate * self.f(c)  # ReZero's alpha, LayerScale's gamma


class Net(nn.Module):
    def __init__(self, blocks, kind, init, plain):
        super().__init__()
        self.cond = nn.Linear(6, 8)  # the first layer: read only through the gated branches
        self.inp = nn.Linear(6, 8)
        self.blocks = nn.ModuleList(Block(8, kind, init, plain) for _ in range(blocks))
        self.head = nn.Linear(8, 1)

    def forward(self, x):
        c = torch.tanh(self.cond(x))
        h = self.inp(x)
        for b in self.blocks:
            h = b(h, c)
        return self.head(h)


def factor(kind, init):
    """The gate's factor at the first step, from its initial value."""
    return {"tanh": math.tanh(init), "added": math.nan}.get(kind, init)


@pytest.mark.parametrize("kind", ["tanh", "rezero", "layerscale", "added"])
@pytest.mark.parametrize("init", [0.0, 1e-6, 1e-4, 0.5])
@settings(max_examples=4, deadline=None)
@given(blocks=st.integers(1, 3), plain=st.booleans(), steps=st.integers(1, 2),
       seed=st.integers(0, 2**16))
def test_a_gradient_vanishing_before_a_gate_that_starts_small_names_the_gate(kind, init, blocks,
                                                                            plain, steps,
                                                                            seed):
    torch.manual_seed(seed)
    model = Net(blocks, kind, init, plain)
    x, y = torch.randn(16, 6), torch.randn(16, 1)
    # the reader alone, on the first step's graph: a gate exactly when the factor is small
    loss = nn.functional.mse_loss(model(x), y)
    gate = zerogates.zero_gates(Graph(loss.grad_fn))
    small = abs(factor(kind, init)) <= 1e-3  # NaN (added) is not small
    if small and not plain:
        assert gate is not None and gate.gates == blocks
        assert any(gate.param is b.gate for b in model.blocks)
        assert gate.largest == abs(factor(kind, init)) or math.isclose(
            gate.largest, abs(factor(kind, init)), rel_tol=1e-6)
    else:
        assert gate is None
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    with gradarg.watch(model) as w:
        for _ in range(steps):
            optimizer.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
    text = w.summary(checks=False)
    said = SAID.search(text)
    # what a gate explains: a gradient that vanished before it, or one exactly zero there
    # (a gate at 0 on the first step)
    shrank = "vanishing gradient" in text or "all-zero gradient for" in text
    if said is None:
        # a gate that is itself the zero factor is told by the all-zero finding's own
        # account (a product with the parameter, "as a ReZero gate")
        if re.search(r"passes through a product \(MulBackward0\) with blocks\.\d\.gate", text):
            assert init == 0 and kind in ("rezero", "layerscale") and not plain, text
            return
        # not told: the gate is not small, not a factor, not a parameter, or nothing shrank
        assert not (small and not plain and shrank), text
        return
    assert small and not plain and shrank, text
    names = [f"blocks.{i}.gate" for i in range(blocks)]
    told = said[1].removeprefix("tanh(").removesuffix(")")
    assert told in names, text
    assert said[1].startswith("tanh(") == (kind == "tanh"), text
    assert int(said[2] or 0) == blocks - 1, text
    # the gate's size now, as said, against the parameter itself
    now = max(float(model.blocks[i].gate.detach().abs().max()) for i in range(blocks)
              if names[i] == told)
    m = re.search(r"and are at most (\S+) now", text)
    assert m is not None and math.isclose(float(m[1]), now, rel_tol=0.05, abs_tol=1e-12), text
