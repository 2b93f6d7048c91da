"""Class: a squared error on sigmoid outputs has the gradient ``-2 (y - p) p (1 - p)`` in the
logit, which vanishes where ``p`` is saturated even for a wrong prediction; the logistic loss's
is ``p - y``.  The watch names a squared error (``mse_loss`` or a hand-written ``(y - p) ** 2``)
on sigmoid outputs of which at least a quarter are saturated on the wrong side, with the count;
unsaturated logits, right predictions and binary cross-entropy on the logits are not named.

The truth comes from torch alone: the count is recomputed from the logits and targets, and for
the flat wrong predictions the squared loss's gradient in the logit is at least ten times
smaller than the logistic loss's.  Generated: the loss's spelling, the logits' scale, which
side they saturate on, the targets and the seed.
"""

from __future__ import annotations

import re

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg


@settings(max_examples=30, deadline=None)
@given(form=st.sampled_from(["mse", "pow", "pow-reversed", "bce"]),
       scale=st.sampled_from([0.1, 1.0, 8.0, 8.0]), right=st.booleans(),
       seed=st.integers(0, 2**16))
def test_a_squared_error_on_saturated_wrong_sigmoids_is_named(form, scale, right, seed):
    torch.manual_seed(seed)
    model = nn.Linear(3, 1)
    with torch.no_grad():
        model.weight.fill_(scale)
        model.bias.zero_()
    x = torch.rand(24, 3) + 0.5  # positive inputs: every logit has the weight's sign
    y = torch.full((24,), 1.0 if right else 0.0)  # predictions near 1: right or wrong
    y[:4] = 1 - y[:4]
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with gradarg.watch(model) as w:
        opt.zero_grad()
        z = model(x).squeeze(1)
        p = torch.sigmoid(z)
        if form == "mse":
            loss = F.mse_loss(p, y)
        elif form == "pow":
            loss = ((y - p) ** 2).sum()
        elif form == "pow-reversed":
            loss = ((p - y) ** 2).mean()
        else:
            loss = F.binary_cross_entropy_with_logits(z, y)
        loss.backward()
        opt.step()
    with torch.no_grad():  # the truth, from the logits and targets
        zt = z.detach()
        pt = torch.sigmoid(zt)
        flat = (pt * (1 - pt) < 0.01) & ((y - pt).abs() > 0.5)
        wrong = int(flat.sum())
    if wrong:
        zz = zt.clone().requires_grad_(True)
        (square,) = torch.autograd.grad(((y - torch.sigmoid(zz)) ** 2).sum(), zz)
        (logistic,) = torch.autograd.grad(
            F.binary_cross_entropy_with_logits(zz, y, reduction="sum"), zz)
        assert bool((square[flat].abs() * 10 < logistic[flat].abs()).all())
    expected = form != "bce" and wrong >= 0.25 * 24
    problems = " ".join(w.problems())
    named = re.search(r"a squared error on sigmoid outputs: (\d+) of (\d+) predictions are "
                      r"saturated on the wrong side", problems)
    assert bool(named) == expected, (form, scale, right, wrong, problems)
    if named:
        assert (int(named.group(1)), int(named.group(2))) == (wrong, 24)
        assert not w.summary().startswith("gradients ok")
