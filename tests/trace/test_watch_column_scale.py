"""Class: a regression loss over several output columns whose targets have very different
scales: one column makes nearly all of the loss and of the gradient the shared layers get;
the watch names the column, its share and the targets' scale ratio instead of "ok".
Standardised columns, or columns of one scale, say nothing of the kind.

The truth comes from torch alone: each column's share of the elementwise loss
(``reduction='none'``, summed over the rows) and each target column's root mean square,
computed by the test from the step's output and targets; the rule's thresholds are the
documented ones (:data:`~gradarg.trace.watching.columnscale.SHARE`,
:data:`~gradarg.trace.watching.columnscale.SCALES`).  Generated: the loss, the number of
columns, the scale of one to three target columns, whether the targets are standardised, the widths
and the seed.
"""

from __future__ import annotations

import re

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg
from gradarg.trace.watching.columnscale import SCALES, SHARE

LOSSES = {"mse": F.mse_loss, "smooth_l1": F.smooth_l1_loss, "huber": F.huber_loss}


@settings(max_examples=30, deadline=None)
@given(loss=st.sampled_from(sorted(LOSSES)), columns=st.integers(2, 4),
       big=st.sampled_from([1.0, 3.0, 30.0, 300.0]), bigs=st.sampled_from([1, 2, 3]),
       standardise=st.booleans(), width=st.integers(4, 12), seed=st.integers(0, 2**16))
def test_a_column_that_dominates_the_loss_is_named(loss, columns, big, bigs, standardise,
                                                    width, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(5, width), nn.Tanh(), nn.Linear(width, columns))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(64, 5)
    y = torch.randn(64, columns)
    bigs = min(bigs, columns - 1)  # the last columns' targets at another scale (several of
    y[:, -bigs:] = big * (2 + y[:, -bigs:])  # them: none makes nearly all of the loss)
    if standardise:
        y = (y - y.mean(0)) / y.std(0)
    fn = LOSSES[loss]
    with gradarg.watch(model) as w:
        opt.zero_grad()
        out = model(x)
        fn(out, y).backward()
        opt.step()
    # the truth, from torch: each column's share of the loss, each target column's scale
    per = fn(out.detach(), y, reduction="none").sum(0).double()
    share = per / per.sum()
    scale = y.double().pow(2).mean(0).sqrt()
    k = int(share.argmax())
    expected = float(share[k]) >= SHARE and float(scale[k] / scale.min()) >= SCALES
    text = w.summary(checks=False)
    said = re.search(r"over (\d+) output columns: column (\d+) makes ([\d.]+)% of the loss", text)
    assert bool(said) == expected, text
    if said:
        assert (int(said.group(1)), int(said.group(2))) == (columns, k), text
        assert abs(float(said.group(3)) - 100 * float(share[k])) < 0.01, text
        assert not text.startswith("gradients ok"), text
