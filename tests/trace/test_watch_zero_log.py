"""Class: a NaN loss made by ``p * log(p)`` (an entropy or KL term) at entries where ``p`` is
exactly 0 (``0 * -inf``) is located there, as ``0 * log 0``, not as an underflow.  Look-alikes
are not: the same term with ``log(p + eps)`` or ``torch.special.xlogy(p, p)``, probabilities
without zeros, and a cross-entropy ``t * log(p)`` whose target is positive where ``p`` is 0
(``-inf * t``: an infinite loss, not ``0 * log 0``).

The truth comes from torch alone: the loss's value, the entries where the factor and the log's
input are both 0, and the parameters' gradients (finite: the zeros are constant padding, as
sparsemax's backward keeps to its support).  Generated: the widths, how many zeros, the eps.
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg

SAID = "0 * log 0 = 0 * (-inf) = NaN in"
FORMS = ["entropy", "eps", "xlogy", "no zeros", "cross"]


@pytest.mark.parametrize("form", FORMS)
@settings(max_examples=6, deadline=None)
@given(width=st.integers(3, 10), zeros=st.integers(1, 6), eps=st.floats(1e-8, 1e-3),
       batch=st.integers(1, 8), seed=st.integers(0, 2**16))
def test_zero_times_log_zero_is_located(form, width, zeros, eps, batch, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, width))
    x = torch.randn(batch, 4)
    with gradarg.watch(model) as w:
        q = torch.softmax(model(x), dim=1)
        pad = torch.zeros(batch, 0 if form == "no zeros" else zeros)
        p = torch.cat([q, pad], dim=1)  # exact zeros, as sparsemax gives
        if form == "entropy" or form == "no zeros":
            loss = -(p * torch.log(p)).sum(1).mean()
        elif form == "eps":
            loss = -(p * torch.log(p + eps)).sum(1).mean()
        elif form == "xlogy":
            loss = -torch.special.xlogy(p, p).sum(1).mean()
        else:  # a positive target against p with zeros: -inf terms, an infinite loss
            t = torch.full_like(p, 1 / p.shape[1])
            loss = -(t * torch.log(p)).sum(1).mean()
        loss.backward()
    # the truth, from torch: the loss is NaN exactly where p * log(p) meets p == 0
    zero_log = form == "entropy" and bool((p == 0).any())
    assert bool(torch.isnan(loss)) == zero_log
    assert all(bool(torch.isfinite(prm.grad).all()) for prm in model.parameters())
    text = w.summary(checks=False)
    assert (SAID in text) == zero_log, (form, text)
    if zero_log:
        assert f"in {int((p == 0).sum())} of {p.numel()} entries" in text
