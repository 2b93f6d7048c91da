"""Class: a Huber loss whose ``delta`` is small against every error: each element sits in the
loss's linear part, where its gradient is ``delta * sign(error)``, so the whole gradient is
``delta`` times L1's; the watch names the loss and its delta instead of "ok".  With errors
inside ``delta`` somewhere, a ``delta`` of 1 or more, or ``SmoothL1Loss`` with the same
``beta`` (slope 1), nothing of the kind is said.

The truth comes from torch alone: the gradient of ``huber_loss`` with respect to its input
equals ``delta * sign(input - target) / n`` elementwise exactly when every error exceeds delta
(checked with ``torch.autograd.grad``).  Generated: delta, the errors' scale, the reduction,
Huber or SmoothL1, the widths and the seed.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg
from gradarg.trace.watching.observed import HUBER_SLOPE


@settings(max_examples=30, deadline=None)
@given(delta=st.sampled_from([1e-4, 1e-3, 1e-2, 0.1, 1.0]), scale=st.sampled_from([0.01, 1, 10]),
       loss=st.sampled_from(["huber", "smooth_l1"]), reduction=st.sampled_from(["mean", "sum"]),
       width=st.integers(2, 6), seed=st.integers(0, 2**16))
def test_a_huber_delta_below_every_error_is_named(delta, scale, loss, reduction, width, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(3, width), nn.Tanh(), nn.Linear(width, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(16, 3)
    y = scale * (5 + torch.rand(16, 1)) * torch.sign(torch.randn(16, 1))
    fn = (lambda p: F.huber_loss(p, y, delta=delta, reduction=reduction)) if loss == "huber" \
        else (lambda p: F.smooth_l1_loss(p, y, beta=delta, reduction=reduction))
    with gradarg.watch(model) as w:
        opt.zero_grad()
        pred = model(x)
        fn(pred).backward()
        opt.step()
    # the truth, from torch: the loss's gradient at the predictions
    p = pred.detach().requires_grad_()
    g, = torch.autograd.grad(fn(p), p)
    n = p.numel() if reduction == "mean" else 1
    linear = bool(((p.detach() - y).abs() > delta).all())
    if loss == "huber" and linear:
        assert torch.allclose(g, delta * torch.sign(p.detach() - y) / n)
    text = w.summary(checks=False)
    named = f"huber_loss (nn.HuberLoss) with delta={delta:g}" in text
    assert named == (loss == "huber" and linear and delta <= HUBER_SLOPE), text
