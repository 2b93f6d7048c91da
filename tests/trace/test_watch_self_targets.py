"""Class: a cross-entropy with probability targets, or a ``kl_div``, whose targets are the
model's own current probabilities (the same logits, detached: Learning without Forgetting's
targets recomputed at every step) is named: its gradient is zero.  Targets from a frozen teacher,
from the model before an update, at another temperature, or hard labels, are not named.

The truth comes from torch alone: the distillation term's gradient with respect to the logits,
compared with zero.  Generated: the loss (cross-entropy or KL), the source of the targets, the
temperature, the shapes.
"""

from __future__ import annotations

import copy

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg

SAID = "are the model's own current probabilities"
BUGS = ("recomputed", "recomputed kl", "recomputed by hand", "recomputed kl by hand")
FINE = ("teacher", "before update", "other temperature", "hard labels")


def _distill(z, soft, loss, temperature):
    if loss == "by hand":
        return (soft * -F.log_softmax(z / temperature, 1)).sum(1).mean()
    if loss == "kl by hand":
        return (soft * (soft.log() - F.log_softmax(z / temperature, 1))).sum(1).mean()
    if loss == "kl":
        return F.kl_div(F.log_softmax(z / temperature, 1), soft, reduction="batchmean")
    return F.cross_entropy(z / temperature, soft)


@pytest.mark.parametrize("source", BUGS + FINE)
@settings(max_examples=6, deadline=None)
@given(rows=st.integers(2, 16), classes=st.integers(2, 6), width=st.integers(2, 6),
       temperature=st.sampled_from([1.0, 2.0, 4.0]), seed=st.integers(0, 2**16))
def test_targets_equal_to_the_scores_own_probabilities_are_named(source, rows, classes, width,
                                                                 temperature, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(width, 8), nn.Tanh(), nn.Linear(8, classes))
    teacher = copy.deepcopy(model)
    with torch.no_grad():
        for p in teacher.parameters():
            p.add_(0.3 * torch.randn_like(p))
    x = torch.randn(rows, width)
    before = model(x).detach()
    with torch.no_grad():  # one update of the model, so "before" differs from now
        for p in model.parameters():
            p.sub_(0.1 * torch.randn_like(p))
    loss = source.removeprefix("recomputed ") if source.startswith("recomputed ") else "ce"
    with gradarg.watch(model) as w:
        z = model(x)
        z.retain_grad()
        if source.startswith("recomputed"):
            with torch.no_grad():
                soft = F.softmax(model(x) / temperature, 1)
        elif source == "teacher":
            with torch.no_grad():
                soft = F.softmax(teacher(x) / temperature, 1)
        elif source == "before update":
            soft = F.softmax(before / temperature, 1)
        elif source == "other temperature":
            soft = F.softmax(z.detach() / (2 * temperature), 1)
        else:
            soft = torch.randint(0, classes, (rows,))
        _distill(z, soft, loss, temperature).backward()
    # the truth, from torch: the term's gradient at the logits is zero only for the bugs
    assert (float(z.grad.abs().max()) < 1e-6) == (source in BUGS), float(z.grad.abs().max())
    text = w.summary(checks=False)
    assert (SAID in text) == (source in BUGS), (source, text)


def test_an_empty_batch_is_read_without_losing_the_other_findings():
    """No rows: nothing to name, and the NaN loss is still named (no reading of the loss was
    lost to an error)."""
    model = nn.Linear(3, 4)
    with gradarg.watch(model) as w:
        z = model(torch.randn(0, 3)).reshape(0, 4)
        loss = F.cross_entropy(z, F.softmax(z.detach(), 1))
        loss.backward()
    assert torch.isnan(loss)
    text = w.summary(checks=False)
    assert SAID not in text and "the loss passed to backward() is NaN" in text, text
