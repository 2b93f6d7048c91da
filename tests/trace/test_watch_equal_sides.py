"""Class: a regression loss between two evaluations of one network on one input, with nothing
random between them (a Pi-model consistency term without noise or dropout), compares equal
tensors: the term and its gradient ``2 (x - y) (dx - dy)`` are exactly 0.  The watch names a
regression loss whose input and target are equal in every entry while both carry gradient;
with noise, dropout in train mode, different inputs, or a detached target, it does not.

The truth comes from torch alone: the two sides are equal exactly when the generated setup
makes them so, and then the term's gradient is exactly zero.  Generated: the loss, the
perturbation, a detached target, and the seed.
"""

from __future__ import annotations

import re

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg

LOSSES = {"mse": F.mse_loss, "smooth_l1": F.smooth_l1_loss, "huber": F.huber_loss}


@settings(max_examples=30, deadline=None)
@given(loss=st.sampled_from(sorted(LOSSES)), how=st.sampled_from(["same", "same", "noise",
                                                                   "dropout", "other-input"]),
       detached=st.booleans(), seed=st.integers(0, 2**16))
def test_a_regression_loss_between_equal_sides_is_named(loss, how, detached, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Dropout(0.3 if how == "dropout" else 0),
                          nn.Linear(8, 3)).train()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(16, 4)
    second = {"noise": x + 0.1 * torch.randn_like(x), "other-input": torch.randn(16, 4)}.get(how, x)
    with gradarg.watch(model) as w:
        opt.zero_grad()
        a, b = model(x), model(second)
        if detached:
            b = b.detach()
        term = LOSSES[loss](a, b)
        (term + 0.1 * model(x).pow(2).mean()).backward()  # another term keeps the step alive
        opt.step()
    equal = torch.equal(a.detach(), b.detach())  # the truth
    if equal:
        assert term.item() == 0.0
    problems = " ".join(w.problems())
    named = re.search(r"compares two tensors \(16, 3\) that are equal in every entry", problems)
    assert bool(named) == (equal and not detached), (loss, how, detached, problems)
