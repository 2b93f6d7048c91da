"""Class: a NaN loss made by a target times ``log_softmax`` of logits masked to -inf (illegal
moves, padding) where the target is 0 (``0 * -inf``, AlphaZero's policy loss over legal moves)
is located there, with its count.  Look-alikes are not: the mask as a large finite negative
value, the product taken with ``torch.where``, no masked entry, and a target positive at a
masked entry (``t * -inf``: an infinite loss, not ``0 * -inf``).

The truth comes from torch alone: the loss's value, the entries where the target is 0 and the
log-probabilities -inf, and the parameters' gradients (finite).  Generated: the moves, how many
are illegal per row, the batch, the seed.
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg

SAID = "0 * -inf = NaN in"
FORMS = ["neg inf", "finite", "where", "all legal", "positive at masked"]


@pytest.mark.parametrize("form", FORMS)
@settings(max_examples=8, deadline=None)
@given(moves=st.integers(3, 12), illegal=st.integers(1, 2), batch=st.integers(1, 8),
       seed=st.integers(0, 2**16))
def test_zero_target_times_masked_log_softmax_is_located(form, moves, illegal, batch, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, moves))
    x = torch.randn(batch, 4)
    legal = torch.ones(batch, moves, dtype=torch.bool)
    if form != "all legal":
        legal[:, :illegal] = False
    pi = torch.rand(batch, moves) * legal
    if form == "positive at masked":
        pi[:, 0] = 0.5
    pi = pi / pi.sum(1, keepdim=True)
    with gradarg.watch(model) as w:
        fill = torch.finfo(torch.float32).min if form == "finite" else float("-inf")
        logp = torch.log_softmax(model(x).masked_fill(~legal, fill), dim=1)
        if form == "where":
            loss = -torch.where(pi > 0, pi * logp, 0.0).sum(1).mean()
        else:
            loss = -(pi * logp).sum(1).mean()
        loss.backward()
    # the truth, from torch: NaN exactly where a 0 target meets a -inf log-probability
    at = (pi == 0) & (logp == float("-inf"))
    nan = form in ("neg inf", "all legal", "positive at masked") and bool(at.any())
    assert bool(torch.isnan(loss)) == nan
    assert all(bool(torch.isfinite(p.grad).all()) for p in model.parameters())
    text = w.summary(checks=False)
    assert (SAID in text) == nan, (form, text)
    if nan:
        assert f"in {int(at.sum())} of {logp.numel()} entries" in text, text
