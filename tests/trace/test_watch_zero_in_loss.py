"""Class: a gradient made all zero after the model, by the loss (``cross_entropy`` whose every
target is ``ignore_index``, a loss weighted by 0, a flat operation applied to the output inside
the loss), is said to be made there, not inside the model: the summary and ``why_no_grad`` say
the gradient arriving at the model's output was already all zero, and name what the loss's
saved values show (the ignore index, the factor 0).

The truth comes from torch alone: a tensor hook of the test on the model's output records the
gradient leaving the loss.  Generated: the loss (bugs and controls: some targets ignored, a
weight of 0.5), the reduction, the ignore index, the widths, the dtype.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg


def _ce(ignore: int, reduction: str, ignored: int):
    def loss(out, y):
        y = y.clone()
        y[:ignored] = ignore
        return F.cross_entropy(out, y, ignore_index=ignore, reduction=reduction)
    return loss


# name -> (loss(out, y), what the summary must name when the gradient is zero)
def losses(ignore: int, reduction: str) -> dict:
    return {
        "all targets ignored": (_ce(ignore, reduction, 8), f"ignore_index={ignore}"),
        "some targets ignored": (_ce(ignore, reduction, 3), None),
        "weight 0": (lambda out, y: 0.0 * F.cross_entropy(out, y), "factor of 0"),
        "weight 0.5": (lambda out, y: 0.5 * F.cross_entropy(out, y), None),
        "clamp far above": (lambda out, y: out.clamp(min=1e4).sum(), "ClampBackward1"),
        "round": (lambda out, y: torch.round(out).sum(), "RoundBackward0"),
    }


@settings(max_examples=40, deadline=None)
@given(kind=st.sampled_from(["all targets ignored", "some targets ignored", "weight 0",
                             "weight 0.5", "clamp far above", "round"]),
       reduction=st.sampled_from(["mean", "sum"]), ignore=st.sampled_from([-100, -1, 2]),
       width=st.integers(2, 6), dtype=st.sampled_from([torch.float32, torch.float64]),
       seed=st.integers(0, 2**16))
def test_a_zero_made_by_the_loss_is_said_to_be_made_there(kind, reduction, ignore, width,
                                                           dtype, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, width), nn.Tanh(), nn.Linear(width, 3)).to(dtype)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(8, 4, dtype=dtype), torch.randint(0, 2, (8,))
    fn, named = losses(ignore, reduction)[kind]
    seen = {}
    with gradarg.watch(model) as w:
        out = model(x)
        out.register_hook(lambda g: seen.__setitem__("out", g))
        loss = fn(out, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    truth = not seen["out"].any()  # torch: the loss sent back an all-zero gradient
    text = w.summary(checks=False)
    why = w.why_no_grad("0.weight")
    said = "already all zero" in text and "by the loss" in text
    assert said == truth, (kind, text)
    if truth:
        assert named in text, text
        assert "already all zero" in why and "by the loss" in why, why
        assert "units" not in why, why  # nothing inside the model is blamed
    else:
        assert text.startswith("gradients ok"), text
