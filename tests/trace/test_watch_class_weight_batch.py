"""Class: a ``weight`` given to ``cross_entropy`` / ``nll_loss`` is one weight per class, read
for sample ``i`` as ``weight[target[i]]``; per-sample weights passed there run without an
error only when the batch has as many rows as there are classes, and then weight each sample
by its label's entry.  The watch names a weight as long as the batch and the classes whose
entries differ from the row's own for some sample, with the count; weights given the right
way (``reduction='none'``, then a weighted mean), class weights of another length than the
batch, and equal weights say nothing of the kind.

The truth comes from the tensors and torch alone: the samples ``i`` (a Python loop) with
``w[target[i]] != w[i]``, and that the loss torch computed is the class-weighted one, not the
per-sample one.  Generated: the batch, the classes, how the weights are given, their values
(some equal), the targets and the seed.
"""

from __future__ import annotations

import re

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg


@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 9), extra=st.sampled_from([0, 0, 0, 2]),
       how=st.sampled_from(["weight=", "weight=", "none-then-mean", "equal"]),
       levels=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_a_class_weight_as_long_as_the_batch_is_named(n, extra, how, levels, seed):
    torch.manual_seed(seed)
    classes = n + extra
    model = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, classes))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(n, 4), torch.randint(0, classes, (n,))
    w = torch.randint(1, levels + 1, (classes,)).float() / levels  # some entries equal
    if how == "equal":
        w = torch.full((classes,), 0.5)
    with torch.no_grad():  # torch reads weight per class: the loss is the w[y]-weighted mean
        per = nn.functional.cross_entropy(model(x), y, reduction="none")
        if how != "none-then-mean":
            assert torch.isclose(nn.functional.cross_entropy(model(x), y, weight=w),
                                 (per * w[y]).sum() / w[y].sum())
    with gradarg.watch(model) as w_:
        opt.zero_grad()
        out = model(x)
        if how == "none-then-mean":
            per = nn.functional.cross_entropy(out, y, reduction="none")
            loss = (per * w[:n]).sum() / w[:n].sum()
        else:
            loss = nn.functional.cross_entropy(out, y, weight=w)
        loss.backward()
        opt.step()
    # the truth: which samples torch weighs by another entry than their row's (a Python loop)
    moved = sum(1 for i in range(n) if float(w[int(y[i])]) != float(w[i])) \
        if how in ("weight=", "equal") and classes == n else 0
    problems = " ".join(w_.problems())
    named = re.search(r"weight= with (\d+) entries, as many as the batch's rows", problems)
    assert bool(named) == (moved > 0), (problems, moved)
    if named:
        assert re.search(rf"\b{moved} of the {n} samples are weighted by another entry", problems)
        assert int(named.group(1)) == n
        assert not w_.summary().startswith("gradients ok")
