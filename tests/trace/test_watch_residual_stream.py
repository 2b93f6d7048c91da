"""Class: a stack of residual blocks ``x + f(x)`` without normalisation has per-block Jacobians
``I + J_f``; with the branches at their usual initial scale the stream and its gradient grow
with every block.  When the watch names an exploding gradient, it names the residual additions
the graph holds (their number) and the missing normalisation; with a normalisation in the
branches, or no explosion, nothing of the kind is said.

The truth comes from torch alone: the number of residual additions built whose stream carries
a gradient (the first block's input does not), and, unscaled over 16 blocks or more, that the
gradient at the first block's output is more than 100 times the gradient at the model's
output (often 1000 times; 900 at one seed a random sweep drew).  Generated: the depth,
the branch's scale, a LayerNorm in the branches, and the seed.
"""

from __future__ import annotations

import re

import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg
from gradarg.trace.graph.nodes import Graph
from gradarg.trace.watching.residuals import residual_adds


class Residual(nn.Module):
    def __init__(self, depth, scale, norm):
        super().__init__()
        self.blocks = nn.ModuleList(nn.Linear(32, 32) for _ in range(depth))
        self.norms = nn.ModuleList(nn.LayerNorm(32) if norm else nn.Identity()
                                   for _ in range(depth))
        self.out = nn.Linear(32, 32)
        with torch.no_grad():
            for b in self.blocks:
                nn.init.kaiming_normal_(b.weight)
                b.weight.mul_(scale)
                b.bias.zero_()

    def forward(self, x, kept=None):
        for block, norm in zip(self.blocks, self.norms, strict=True):
            x = x + torch.relu(block(norm(x)))
            if kept is not None and not kept:
                x.retain_grad()
                kept.append(x)
        return self.out(x)


@settings(max_examples=20, deadline=None)
@given(depth=st.sampled_from([2, 4, 16, 20]), scale=st.sampled_from([1.0, 1.0, 0.05]),
       norm=st.booleans(), seed=st.integers(0, 2**16))
@example(depth=16, scale=1.0, norm=False, seed=17514)  # 900 times, not 1000
def test_residual_additions_are_named_with_an_explosion(depth, scale, norm, seed):
    torch.manual_seed(seed)
    model = Residual(depth, scale, norm)
    opt = torch.optim.SGD(model.parameters(), lr=1e-6)
    x = torch.randn(64, 32)
    if scale == 1.0 and not norm and depth >= 16:  # the truth, from torch
        kept: list[torch.Tensor] = []
        out = model(x, kept)
        out.retain_grad()
        ((out - x) ** 2).mean().backward()
        assert float(kept[0].grad.norm()) > 100 * float(out.grad.norm())
        model.zero_grad()
    read = residual_adds(Graph(((model(x) - x) ** 2).mean().grad_fn))  # the graph alone
    assert (read is None) == (norm or depth - 1 < 2)
    assert read is None or read.adds == depth - 1
    with gradarg.watch(model) as w:
        opt.zero_grad()
        ((model(x) - x) ** 2).mean().backward()
        opt.step()
    problems = " ".join(w.problems())
    exploding = "exploding gradient" in problems
    named = re.search(r"the forward adds (\d+) residual branches to a stream", problems)
    assert bool(named) == (exploding and not norm and depth - 1 >= 2), (depth, scale, norm,
                                                                        problems)
    if named:
        assert int(named.group(1)) == depth - 1  # the first block's stream has no gradient
