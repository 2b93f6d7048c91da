"""Class: optimizer steps that read sums of unequal numbers of backward passes whose losses
are divided by one fixed number are named, with the counts and the factors' totals: a step
whose factors add up to more than 1 (an accumulation counter that restarts at each epoch
carries micro-batches over) as a problem, smaller ones (a short last group) in a note; groups each
divided by their own size say nothing (equal totals), a loss whose factor cannot be read
leaves a note, and sums that grow because ``zero_grad`` is missing are another finding.

The truth comes from the test's own loop, checked against torch: the micro-batches
backpropagated since the last ``zero_grad`` at each step, and the gradient the step read equal
to the sum of their gradients (``torch.autograd.grad`` at the parameters before that step).
Generated: the group sizes, how each loss is scaled, whether ``zero_grad`` runs, the seed.
"""

from __future__ import annotations

import re

import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg

NAMED = re.compile(r"steps read sums of unequal numbers of backward passes: ([\d, ]+) \(")
PROBLEM = "their losses' factors add up to"
UNREAD = "could not be read from their graphs"


def _loss(model, x, y, how, size, fixed):
    if how == "unread":  # a squared error written by hand: no known loss term below it
        return ((model(x).softmax(1) - F.one_hot(y, 3)) ** 2).mean() / fixed
    return F.cross_entropy(model(x), y) / (size if how == "own" else fixed)


@settings(max_examples=25, deadline=None)
@given(groups=st.lists(st.integers(1, 5), min_size=2, max_size=4),
       how=st.sampled_from(["fixed", "fixed", "own", "unread"]),
       zero=st.sampled_from([True, True, False]), seed=st.integers(0, 2**16))
@example(groups=[4, 6], how="fixed", zero=True, seed=0)  # an epoch's leftovers carried over
@example(groups=[4, 4, 2], how="own", zero=True, seed=1)  # a short last group, rescaled
@example(groups=[2, 2], how="fixed", zero=True, seed=2)
@example(groups=[4, 4, 2], how="fixed", zero=True, seed=3)  # short last group: a note
def test_unequal_sums_at_the_steps_are_named(groups, how, zero, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    fixed = max(groups[:-1]) if len(groups) > 2 else groups[0]  # the loop's accumulation count
    sums, pending, checked = [], [], False
    with gradarg.watch(model) as w:
        for size in groups:
            for _ in range(size):
                x, y = torch.randn(6, 4), torch.randint(0, 3, (6,))
                _loss(model, x, y, how, size, fixed).backward()
                pending.append((x, y))
            if not checked:  # the loop's bookkeeping against torch, once
                want = torch.autograd.grad(
                    sum(_loss(model, a, b, how, size, fixed) for a, b in pending),
                    list(model.parameters()))
                for p, g in zip(model.parameters(), want, strict=True):
                    assert torch.allclose(p.grad, g, atol=1e-5)
                checked = True
            sums.append(len(pending))
            opt.step()
            if zero:
                opt.zero_grad()
                pending = []
    text = w.summary()
    found = NAMED.search(text)
    if zero and len(set(sums)) > 1 and how != "own":
        assert found, text
        assert [int(c) for c in found[1].split(", ")] == sums, (sums, text)
        # with a fixed divisor (the largest group), a step above one mean's worth is a
        # problem; smaller ones (a short last group) are a note
        larger = how == "fixed" and max(sums) > fixed
        assert (PROBLEM in text) == (how == "fixed"), text
        assert (UNREAD in text) == (how == "unread"), text
        assert text.startswith("gradients ok") == (not larger), text
    else:
        assert found is None, text
