"""Class: a softmax or log_softmax over a dimension of size 1 is constant (1 or 0), so its
derivative is exactly zero and so is every gradient behind it: a cross-entropy over one column
(an InfoNCE loss with in-batch negatives on a batch of one pair, a classifier with one output)
is exactly 0.  The watch names that softmax, its dimension and shape, as the cause of the
all-zero gradient; over a dimension of two or more entries nothing of the kind is said.

The truth comes from torch alone: every parameter's gradient is exactly zero when the
dimension has one entry, and nonzero otherwise.  Generated: the loss (cross-entropy, a picked
log-probability, a weighted softmax), the number of columns, the batch, the dimension's
spelling and the seed.
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
@given(kind=st.sampled_from(["ce", "picked", "weighted"]), columns=st.sampled_from([1, 1, 2, 5]),
       batch=st.integers(1, 5), last=st.booleans(), seed=st.integers(0, 2**16))
def test_a_softmax_over_one_entry_is_named_as_the_zero(kind, columns, batch, last, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, columns))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(batch, 4)
    dim = -1 if last else 1
    weights = torch.rand(batch, columns) + 0.1

    def loss_of(out):
        if kind == "ce":
            return F.cross_entropy(out, torch.zeros(batch, dtype=torch.long))
        if kind == "picked":
            return -F.log_softmax(out, dim=dim)[:, 0].mean()
        return -(F.softmax(out, dim=dim) * weights).sum()

    with gradarg.watch(model) as w:
        opt.zero_grad()
        loss = loss_of(model(x))
        loss.backward()
        grads = [p.grad.clone() for p in model.parameters()]
        opt.step()
    zero = all(bool((g == 0).all()) for g in grads)
    assert zero == (columns == 1)  # the truth, from torch
    problems = " ".join(w.problems())
    named = re.search(r"(log_softmax|softmax) over dimension (\d) of size 1 \(shape \((\d+), 1\)\)"
                      r" is constant", problems)
    assert bool(named) == (columns == 1), (columns, problems)
    if named:
        assert named.group(1) == ("softmax" if kind == "weighted" else "log_softmax")
        assert int(named.group(2)) == 1 and int(named.group(3)) == batch
        assert not w.summary().startswith("gradients ok")
