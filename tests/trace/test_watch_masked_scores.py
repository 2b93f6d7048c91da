"""Class: scores multiplied by a 0/1 tensor before a log-sigmoid, a softplus or a binary
cross-entropy with logits (branch codes {0, 1} used as signs, a mask applied to the logits) are
named: each masked entry adds a constant (log 2) to the loss and no gradient.  Signs -1/+1, a
mask applied after the function (or as the BCE's weight) as well, or a factor of ones only, are
not named.

The truth comes from torch alone: the masked entries' terms are compared with log 2 and their
gradient with zero.  Generated: the function, how the factor is used, its density, the shapes.
"""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg

SAID = "took scores multiplied by a 0/1 tensor"
BUGS = ("codes as signs", "mask before", "bce masked logits")
FINE = ("plus minus signs", "mask before and after", "bce weight too", "ones only")


def _terms(how, score, bits):
    """Per-entry loss terms, each a function of its score."""
    if how == "codes as signs":
        return -F.logsigmoid(bits * score)
    if how == "plus minus signs":
        return -F.logsigmoid((2 * bits - 1) * score)
    if how == "mask before":
        return F.softplus(-(score * bits))
    if how == "mask before and after":
        return -F.logsigmoid(score * bits) * bits
    if how == "ones only":
        return -F.logsigmoid(score * torch.ones_like(bits))
    target = torch.ones_like(bits)
    weight = bits if how == "bce weight too" else None
    return F.binary_cross_entropy_with_logits(score * bits, target, weight=weight,
                                              reduction="none")


@pytest.mark.parametrize("how", BUGS + FINE)
@settings(max_examples=8, deadline=None)
@given(rows=st.integers(2, 12), cols=st.integers(2, 6), width=st.integers(2, 6),
       density=st.sampled_from([0.25, 0.5, 0.75]), seed=st.integers(0, 2**16))
def test_zero_one_factors_before_a_log_sigmoid_are_named(how, rows, cols, width, density, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(width, 8), nn.Tanh(), nn.Linear(8, cols))
    x = torch.randn(rows, width)
    bits = (torch.rand(rows, cols) < density).float()
    bits[0, 0], bits[-1, -1] = 0.0, 1.0  # some 0, some 1
    with gradarg.watch(model) as w:
        score = model(x)
        score.retain_grad()
        terms = _terms(how, score, bits)
        terms.sum().backward()
    # the truth, from torch: the entries at a 0 factor are log 2 with no gradient, when the
    # factor comes before the function and nothing removes them after it
    frozen = bool(torch.allclose(terms.detach()[bits == 0],
                                 torch.full_like(terms[bits == 0], math.log(2))))
    assert bool((score.grad[bits == 0] == 0).all()) == (how not in ("plus minus signs",
                                                                   "ones only"))
    assert frozen == (how in BUGS)
    text = w.summary(checks=False)
    assert (SAID in text) == (how in BUGS), (how, text)
    if how in BUGS:
        assert f"({int((bits == 0).sum())} of {bits.numel()} entries 0" in text, text


@pytest.mark.parametrize("how", BUGS)
def test_an_empty_batch_is_read_without_losing_the_other_findings(how):
    """No rows: nothing to name here, and the empty mean (a NaN loss) is still named, so no
    reading of the loss was lost to an error."""
    torch.manual_seed(0)
    model = nn.Linear(3, 4)
    with gradarg.watch(model) as w:
        score = model(torch.randn(0, 3))
        loss = _terms(how, score, torch.zeros(0, 4)).mean()
        loss.backward()
    assert torch.isnan(loss)
    text = w.summary(checks=False)
    assert SAID not in text and "empty" in text, text
