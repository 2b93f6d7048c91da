"""Class: a min / max over a dimension that picks only some of the entries along it, beside a
parameter whose gradient has rows that are exactly zero (a one-sided Chamfer distance: the
predictions no target picks never move), is named with the counts.  A symmetric Chamfer
distance or a hardest-example max (every row of every parameter still gets gradient), or a
max-pooling over positions that picks every position for some coordinate, is not.

The truth comes from torch alone: the indices the min picked and the rows of the output layer's
gradient that are exactly zero.  Generated: the number of points and targets, the widths, the
reduction used.
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg

SAID = "were picked by any row (observed: the indices it saved)"


@pytest.mark.parametrize("how", ["one-sided", "symmetric", "max-pool", "hardest"])
@settings(max_examples=8, deadline=None)
@given(points=st.integers(4, 24), targets=st.integers(2, 24), width=st.integers(4, 16),
       seed=st.integers(0, 2**16))
@example(points=4, targets=6, width=9, seed=17436)  # max-pool: a dominant column said first
def test_a_min_that_leaves_parameter_rows_untrained_is_named(how, points, targets, width, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(8, width), nn.Tanh(), nn.Linear(width, points * 3))
    code, target = torch.randn(2, 8), torch.randn(targets, 3)
    with gradarg.watch(model) as w:
        pred = model(code).view(2, points, 3)
        d = torch.cdist(target.expand(2, -1, -1), pred).pow(2)  # (2, targets, points)
        if how == "one-sided":
            loss = d.min(dim=2).values.mean()
        elif how == "symmetric":
            loss = d.min(dim=2).values.mean() + d.min(dim=1).values.mean()
        elif how == "max-pool":  # a global max over the points of each coordinate
            loss = F.mse_loss(pred.max(dim=1).values, target[:1].expand(2, 3))
        else:  # the hardest example of the batch
            loss = d.mean((1, 2)).max(dim=0).values
        loss.backward()
    # the truth, from torch: entries along the reduced dimension that no row picked, and rows
    # of the output layer's gradient that are exactly zero
    g = model[2].weight.grad
    zero_rows = int((g == 0).all(1).sum())
    if how in ("one-sided", "symmetric"):
        unpicked = int(torch.unique(d.argmin(dim=2)).numel()) < points
    elif how == "max-pool":
        unpicked = int(torch.unique(pred.max(dim=1).indices).numel()) < points
    else:  # a max over a one-dimensional tensor: not a reduction over a dimension of rows
        unpicked = False
    if how == "one-sided":
        assert (zero_rows > 0) == unpicked  # the unpicked predictions are the zero rows
    if how in ("symmetric", "hardest"):
        assert zero_rows == 0  # every prediction gets gradient
    text = w.summary(checks=False)
    assert (SAID in text) == (unpicked and zero_rows > 0), (how, text)
