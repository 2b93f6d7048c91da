"""Class: a cross-entropy whose logits are masked to -inf at the target (log 0: an infinite
loss) or in a whole row (a softmax over nothing: NaN) is located there, with the counts.
Look-alikes are not: a mask that hides only other positions, a large negative fill (-1e9)
instead of -inf at the target (a large finite loss), fully masked rows whose target is the
ignore_index (the loss stays finite).

The truth comes from torch alone: the loss's value, the rows of log_softmax that are NaN and
the targets whose log-probability is -inf, the parameters' gradients (finite: masked_fill's
backward sends nothing to the masked entries).  Generated: batch, positions, which rows.
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg

SAID = "cross_entropy read logits that are -inf"
FORMS = ["target hidden", "row hidden", "others hidden", "large negative", "row ignored"]


@pytest.mark.parametrize("form", FORMS)
@settings(max_examples=6, deadline=None)
@given(batch=st.integers(2, 12), positions=st.integers(3, 9), hit=st.integers(1, 12),
       seed=st.integers(0, 2**16))
def test_logits_masked_to_minus_inf_are_located(form, batch, positions, hit, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, positions))
    x = torch.randn(batch, 5)
    target = torch.randint(0, positions, (batch,))
    rows = torch.arange(batch) < min(hit, batch)  # the rows the slip touches
    mask = torch.zeros(batch, positions, dtype=torch.bool)
    other = (target + 1) % positions
    if form in ("target hidden", "large negative"):
        mask[rows, target[rows]] = True
    elif form in ("row hidden", "row ignored"):
        mask[rows] = True
    else:
        mask[torch.arange(batch), other] = True
    if form == "row ignored":
        target = torch.where(rows, torch.full_like(target, -100), target)
    fill = -1e9 if form == "large negative" else float("-inf")
    with gradarg.watch(model) as w:
        logits = model(x).masked_fill(mask, fill)
        loss = F.cross_entropy(logits, target)
        loss.backward()
    # the truth, from torch: which rows are all -inf and which targets' logits are -inf
    logp = torch.log_softmax(logits.detach(), 1)
    kept = target != -100
    empty = int(torch.isnan(logp[kept]).all(1).sum())
    at = int((logp[kept].gather(1, target[kept, None]) == float("-inf")).sum())
    assert all(bool(torch.isfinite(p.grad).all()) for p in model.parameters())
    located = not bool(torch.isfinite(loss)) and bool(empty or at)
    assert located == (form in ("target hidden", "row hidden"))
    text = w.summary(checks=False)
    assert (SAID in text) == located, (form, text)
    if located and at:
        assert f"{at} of {batch} targets whose own logit is -inf" in text
