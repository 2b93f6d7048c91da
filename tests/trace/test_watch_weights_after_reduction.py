"""Class: per-example weights multiplied into a loss already reduced to one number
(``(F.cross_entropy(out, y) * w).mean()``): every example's gradient is scaled by the same
factor, the weights' mean, so the weighting does nothing per example; the watch names it
instead of "ok".  ``reduction='none'`` before the product, a scalar loss weight, and weights
of another length than the batch say nothing of the kind.

The truth comes from torch alone: the parameters' gradient of the weighted loss equals the
weights' mean (or sum) times the unweighted loss's gradient (``torch.autograd.grad``),
and differs from the per-example weighted gradient when the weights are not all equal.
Generated: the loss (cross-entropy, MSE, a hand-written mean), the reduction, how the weights
are applied, the widths and the seed.
"""

from __future__ import annotations

import re

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg

BATCH = 12


def _per_example(kind, out, y):
    if kind == "ce":
        return F.cross_entropy(out, y, reduction="none")
    if kind == "mse":
        return F.mse_loss(out, F.one_hot(y, 3).float(), reduction="none").mean(1)
    return (out - F.one_hot(y, 3).float()).pow(2).mean(1)


def _reduced(kind, how, out, y):
    if kind == "ce":
        return F.cross_entropy(out, y, reduction=how)
    if kind == "mse":
        return F.mse_loss(out, F.one_hot(y, 3).float(), reduction=how)
    d = (out - F.one_hot(y, 3).float()).pow(2)
    return d.mean() if how == "mean" else d.sum()


@settings(max_examples=30, deadline=None)
@given(kind=st.sampled_from(["ce", "mse", "hand"]), how=st.sampled_from(["mean", "sum"]),
       apply=st.sampled_from(["after", "after", "none", "scalar", "other-length"]),
       width=st.integers(3, 10), seed=st.integers(0, 2**16))
def test_weights_times_a_reduced_loss_are_named(kind, how, apply, width, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, width), nn.Tanh(), nn.Linear(width, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(BATCH, 4), torch.randint(0, 3, (BATCH,))
    weights = torch.rand(BATCH) + 0.1

    def loss_of(out):
        if apply == "after":
            return (_reduced(kind, how, out, y) * weights).mean()
        if apply == "none":
            return (_per_example(kind, out, y) * weights).mean()
        if apply == "scalar":
            return _reduced(kind, how, out, y) * torch.tensor(0.5)
        return (_reduced(kind, how, out, y) * weights[:5]).mean()

    with gradarg.watch(model) as w:
        opt.zero_grad()
        loss_of(model(x)).backward()
        opt.step()
    # the truth, from torch: weights after the reduction scale every example by their mean
    params = list(model.parameters())
    g_loss = torch.autograd.grad(loss_of(model(x)), params)
    g_plain = torch.autograd.grad(_reduced(kind, how, model(x), y), params)
    if apply == "after":
        for a, b in zip(g_loss, g_plain, strict=True):
            assert torch.allclose(a, weights.mean() * b, atol=1e-6, rtol=1e-4)
    text = w.summary(checks=False)
    said = re.search(r"a loss already reduced to one number .* is multiplied by a tensor of "
                     r"\((\d+),\) weights", text)
    assert bool(said) == (apply == "after"), text
    if said:
        assert int(said.group(1)) == BATCH and not text.startswith("gradients ok"), text
