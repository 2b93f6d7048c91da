"""Class: ``sin(c * x)`` has the derivative ``c * cos(c * x)``, so each such activation
multiplies the gradient by up to ``c`` on its way back; with a large ``c`` (SIREN's
``omega_0 = 30``) and weights at their default scale the gradient explodes towards the input.
When the watch names an exploding gradient, it names the periodic activations of a scaled input
the graph holds, with the factor and their number; a factor of 1 and an exploding gradient
without them say nothing of the kind, and no sine is named without an explosion.

The truth comes from torch alone: the number of scaled activations built, and, for ``c = 30``
at the default init over three layers, that the first layer's weight gradient is more than 50
times the last's.  Generated: the depth, the factor, sin or cos, the initialisation, the seed.
"""

from __future__ import annotations

import math
import re

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg


class Periodic(nn.Module):
    def __init__(self, depth, c, fn, siren):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(1, 32)] + [nn.Linear(32, 32)
                                                          for _ in range(depth - 1)])
        self.out = nn.Linear(32, 1)
        self.c, self.fn = c, fn
        if siren:  # SIREN's init after the first layer
            with torch.no_grad():
                for layer in self.layers[1:]:
                    bound = math.sqrt(6 / 32) / c
                    layer.weight.uniform_(-bound, bound)

    def forward(self, x):
        for layer in self.layers:
            x = self.fn(self.c * layer(x))
        return self.out(x)


@settings(max_examples=20, deadline=None)
@given(depth=st.integers(2, 4), c=st.sampled_from([1.0, 30.0, 30.0]),
       fn=st.sampled_from([torch.sin, torch.cos]), siren=st.booleans(),
       seed=st.integers(0, 2**16))
def test_scaled_periodic_activations_are_named_with_an_explosion(depth, c, fn, siren, seed):
    torch.manual_seed(seed)
    model = Periodic(depth, c, fn, siren)
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    x = torch.linspace(-1, 1, 64)[:, None]
    y = torch.sin(2 * math.pi * x)
    with gradarg.watch(model) as w:
        opt.zero_grad()
        ((model(x) - y) ** 2).mean().backward()
        first = float(model.layers[0].weight.grad.norm())
        last = float(model.out.weight.grad.norm())
        opt.step()
    if c == 30 and not siren and depth >= 3:  # the truth, from torch
        assert first > 50 * last
    problems = " ".join(w.problems())
    exploding = "exploding gradient" in problems
    named = re.search(r"applies sin or cos to an input multiplied by (\d+) \((\d) time", problems)
    assert bool(named) == (exploding and c > 1), (c, siren, depth, problems)
    if named:
        assert float(named.group(1)) == c and int(named.group(2)) == depth
