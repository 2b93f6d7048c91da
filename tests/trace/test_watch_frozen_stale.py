"""Class: "frozen parameter(s) still moved" is said only of a parameter whose ``.grad``, at the
step that moved it, is stale: left from before it was frozen.  A parameter that a backward
pass of this block reached while it still required grad, frozen afterwards (two adapters
switched by ``requires_grad_``, each stepped on its own gradient), is stepped on its own
gradient like any other: nothing is said.

The truth comes from the test's own construction, checked against torch: whether the frozen
layer moved at the step (its values before and after) and whether its ``.grad`` at the step
was made by a backward pass that ran while it required grad (its ``.grad`` then differs from
the one it had before that pass).  Generated: the optimizer (SGD with momentum or weight
decay, AdamW), where the freeze happens (before the block, with a ``.grad`` left by an
earlier step; inside it, after a backward that reached the layer; or frozen when the block
begins, switched on for one backward and off again), ``zero_grad`` with
``set_to_none=False`` or not at all, the widths and the seed.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg

OPTIMIZERS = {
    "sgd-momentum": lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9),
    "sgd-decay": lambda ps: torch.optim.SGD(ps, lr=0.1, weight_decay=0.1),
    "adamw": lambda ps: torch.optim.AdamW(ps, lr=0.01),
}


@settings(max_examples=30, deadline=None)
@given(opt=st.sampled_from(sorted(OPTIMIZERS)),
       when=st.sampled_from(["before", "inside", "switched"]),
       zero=st.booleans(), width=st.integers(2, 6), seed=st.integers(0, 2**16))
def test_frozen_moved_only_on_a_stale_grad(opt, when, zero, width, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, width), nn.Tanh(), nn.Linear(width, 3))
    optimizer = OPTIMIZERS[opt](model.parameters())
    x, y = torch.randn(16, 4), torch.randint(0, 3, (16,))
    first = model[0]
    if when == "before":  # an earlier step, then the freeze: its .grad stays
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
        first.requires_grad_(False)
    if when == "switched":  # frozen when the block begins (no hook on it), switched on for
        first.requires_grad_(False)  # one backward, then off again: an adapter's pattern
    with gradarg.watch(model) as w:
        if when == "switched":
            first.requires_grad_(True)
        if zero:
            optimizer.zero_grad(set_to_none=False)
        grad_before = None if first.weight.grad is None else first.weight.grad.clone()
        F.cross_entropy(model(x), y).backward()
        made_now = first.weight.grad is not None and (
            grad_before is None or not torch.equal(first.weight.grad, grad_before))
        if when in ("inside", "switched"):  # frozen after a backward that reached it
            first.requires_grad_(False)
        before = first.weight.detach().clone()
        optimizer.step()
    moved = not torch.equal(first.weight.detach(), before)  # the truth, from torch
    assert made_now == (when != "before")
    text = w.summary(checks=False)
    said = "frozen parameter(s) (requires_grad=False) still moved" in text
    assert said == (moved and not made_now), text
