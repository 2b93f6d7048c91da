"""Class: a softmax cross-entropy over candidates that are all the same (in-batch negatives on a
batch of one item, duplicated keys, embeddings collapsed to one point) is named, with ``log C``;
distinct candidates, some duplicates only, scores constant for another cause (a zero query, zero
candidates) are not.

The truth comes from torch alone: the candidates' embeddings are compared, the loss is compared
with ``log C`` and the gradients with the control's.  Generated: the number of candidates, the
widths, the temperature, how many distinct items the batch holds, a plain or a batched product.
"""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg

SAID = "candidates that are all the same"


class Towers(nn.Module):
    def __init__(self, features: int, width: int):
        super().__init__()
        self.user = nn.Sequential(nn.Linear(features, width), nn.Tanh(), nn.Linear(width, width))
        self.item = nn.Sequential(nn.Linear(features, width), nn.Tanh(), nn.Linear(width, width))

    def forward(self, users, items, batched):
        u = F.normalize(self.user(users), dim=-1)
        v = F.normalize(self.item(items), dim=-1)
        if batched:  # one group: (1, B, D) @ (1, D, B)
            return torch.bmm(u[None], v[None].transpose(1, 2))[0]
        return u @ v.T


def _step(model, users, items, tau, batched):
    model.zero_grad()
    logits = model(users, items, batched) / tau
    loss = F.cross_entropy(logits, torch.arange(len(users)))
    loss.backward()
    return float(loss.detach()), {n: p.grad.clone() for n, p in model.named_parameters()}


@settings(max_examples=20, deadline=None)
@given(count=st.integers(2, 24), features=st.integers(2, 8), width=st.integers(2, 8),
       tau=st.sampled_from([0.05, 0.1, 1.0]), distinct=st.sampled_from([1, 2, "all"]),
       batched=st.booleans(), seed=st.integers(0, 2**16))
@example(count=14, features=7, width=2, tau=0.05, distinct=1, batched=False,
         seed=3710)  # gradients of 1e-5 from rounding, against 63 for distinct candidates
@example(count=3, features=3, width=2, tau=1.0, distinct=1, batched=False,
         seed=737)  # rounding 2e-7 against 9e-3 for distinct candidates (width 2)
def test_identical_candidates_are_named(count, features, width, tau, distinct, batched, seed):
    torch.manual_seed(seed)
    model = Towers(features, width)
    users, table = torch.randn(count, features), torch.randn(count + 3, features)
    chosen = (torch.arange(count) if distinct == "all"
              else torch.arange(count) % distinct)
    items = table[chosen]
    with gradarg.watch(model) as w:
        loss, grads = _step(model, users, items, tau, batched)
    same = len(set(chosen.tolist())) == 1
    # the truth, from torch alone
    if same:  # the loss is log C; the gradients rounding next to distinct candidates'
        assert abs(loss - math.log(count)) < 1e-5
        _, control = _step(model, users, table[torch.arange(count)], tau, batched)
        scale = max(float(g.abs().max()) for g in control.values())
        # float32 rounding: a few hundred eps of the unit-norm embeddings, at most 1e-4 of
        # the control's largest entry (which can be 1e-2 at width 2)
        assert all(float(g.abs().max()) < max(1e-4 * scale, 1e-6) for g in grads.values())
    text = w.summary(checks=False)
    assert (SAID in text) == same, (distinct, text)
    if same:
        assert f"log {count} = {math.log(count):.4g}" in text, text


@pytest.mark.parametrize("cause", ["zero query", "zero candidates", "candidate bias",
                                   "candidate scale"])
def test_scores_constant_for_another_cause_are_not_named(cause):
    """Constant rows whose gradient does not cancel (a zero query: the candidates differ),
    candidates of zeros, or identical candidates with a learned bias per candidate added to
    the scores (the rows differ, the bias gets gradient) or scaled by a fixed weight per
    candidate (the rows differ, the query gets gradient): not named."""
    torch.manual_seed(0)
    query = nn.Linear(4, 3)
    keys = torch.randn(6, 3)
    if cause == "zero query":
        nn.init.zeros_(query.weight), nn.init.zeros_(query.bias)
    elif cause == "zero candidates":
        keys = torch.zeros(6, 3)
    else:
        keys = torch.randn(1, 3).expand(6, 3) + 1.0
    bias = nn.Parameter(torch.randn(6) if cause == "candidate bias" else torch.zeros(6))
    model = nn.ModuleDict({"query": query})
    model.register_parameter("bias", bias)
    with gradarg.watch(model) as w:
        logits = query(torch.randn(5, 4)) @ keys.T
        if cause == "candidate bias":
            logits = logits + bias
        elif cause == "candidate scale":
            logits = logits * torch.linspace(0.5, 2.0, 6)
        F.cross_entropy(logits, torch.arange(5)).backward()
    if cause == "candidate bias":  # the truth: the bias gets gradient
        assert float(bias.grad.abs().max()) > 1e-3
    if cause == "candidate scale":  # the truth: the query gets gradient
        assert float(query.weight.grad.abs().max()) > 1e-3
    assert SAID not in w.summary(checks=False)


def test_the_watch_does_not_change_the_step():
    torch.manual_seed(3)
    model = Towers(5, 4)
    users, items = torch.randn(8, 5), torch.randn(1, 5).expand(8, 5)
    plain = _step(model, users, items, 0.1, False)
    with gradarg.watch(model):
        watched = _step(model, users, items, 0.1, False)
    assert plain[0] == watched[0]
    for n in plain[1]:
        assert torch.equal(plain[1][n], watched[1][n]), n


def test_an_empty_batch_is_read_without_losing_the_other_findings():
    """A batch of no rows: the reader skips the empty scores, and the empty mean (a NaN loss)
    is still named, so no reading of the loss was lost to an error."""
    torch.manual_seed(0)
    model = Towers(5, 4)
    with gradarg.watch(model) as w:
        logits = model(torch.randn(0, 5), torch.randn(1, 5).expand(6, 5), False) / 0.1
        loss = F.cross_entropy(logits, torch.arange(0))
        loss.backward()
    assert torch.isnan(loss)  # the truth: the mean of no terms
    text = w.summary(checks=False)
    assert SAID not in text and "empty" in text, text
