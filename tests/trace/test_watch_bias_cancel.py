"""Class: a layer's bias whose gradient is exactly zero because the terms of its sum over the
examples cancel (the gradient reaching the layer is not zero) is named as that, not left as a
bare "all-zero gradient" nor blamed on a cut (the random property sweep: smooth L1 past its
beta on two examples, one on each side, gives the head's bias (1 - 1) / 2 = 0).

Truth from torch alone: the bias's ``.grad`` is exactly zero and the gradient at the layer's
output (``retain_grad``) is not; controls where it is not (unequal sides), and where the
gradient reaching the layer is itself zero (a ReLU after it, dead on every example), whose
zero is not a cancellation.  Generated: the batch (even), the widths, the seed, the loss.
"""

from __future__ import annotations

import torch
from hypothesis import given
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg

LOSSES = {"l1": F.l1_loss, "smooth_l1": F.smooth_l1_loss}


def step(half: int, width: int, seed: int, loss: str, split: str):
    torch.manual_seed(seed)
    head = nn.Linear(width, 1)
    model = nn.Sequential(nn.Linear(3, width), nn.Tanh(), head)
    if split == "dead":
        model.append(nn.ReLU())
        with torch.no_grad():
            head.bias.fill_(-100.0)  # the ReLU after it is 0 for every example
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(2 * half, 3)
    with gradarg.watch(model) as w:
        opt.zero_grad()
        out = model(x)
        out.retain_grad()
        ups = half if split in ("even", "dead") else half + 1  # residuals far past beta
        sign = torch.tensor([1.0] * ups + [-1.0] * (2 * half - ups)).unsqueeze(1)
        target = out.detach() + 10.0 * sign
        LOSSES[loss](out, target).backward()
        opt.step()
    return w, model, head


@given(half=st.integers(1, 4), width=st.integers(2, 16), seed=st.integers(0, 2**16),
       loss=st.sampled_from(sorted(LOSSES)), split=st.sampled_from(["even", "uneven", "dead"]))
def test_bias_terms_that_cancel_are_named(half, width, seed, loss, split):
    w, model, head = step(half, width, seed, loss, split)
    name = "2.bias"
    zero = not bool(head.bias.grad.any())
    text, why = w.summary(checks=False), w.why_no_grad(name)
    if split == "dead":
        assert zero
        assert "cancel" not in text and "cancel" not in why, (text, why)
        return
    # torch alone: the bias gradient is the output gradient summed over the examples
    assert torch.equal(head.bias.grad, model[2].bias.grad)
    assert zero == (split == "even"), head.bias.grad
    if zero:
        assert name in text and "cancel exactly" in text, text
        assert "cancel exactly" in why, why
    else:
        assert "cancel" not in text, text
