"""Class: micro-batches accumulated into one step whose losses are each a mean over their own
count (``reduction='mean'`` with padding left out by ``ignore_index``, or micro-batches of
unequal sizes): an entry of a small micro-batch weighs more than one of a large one, and the
step's gradient is not the gradient of the mean over all of them.  The watch names it with
the counts; sums divided once by the total, equal counts, and a single pass say nothing.

The truth comes from the test's data (the targets not ignored, the rows of each micro-batch),
checked against torch: the accumulated gradient against ``torch.autograd.grad`` of the mean
over all the micro-batches' entries, unequal exactly when the counts are.  Generated: the
loss, the micro-batches' sizes and padding, the reduction, and the seed.
"""

from __future__ import annotations

import re

import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg

NAMED = re.compile(r"the (\d+) micro-batches a SGD step summed are each a mean over their own "
                   r"count \((.+?) with reduction='mean', over ([\d, .]+) targets or entries")


@settings(max_examples=25, deadline=None)
@given(loss=st.sampled_from(["cross_entropy", "mse"]),
       parts=st.lists(st.tuples(st.integers(2, 8), st.integers(0, 6)), min_size=1, max_size=3),
       how=st.sampled_from(["mean", "mean", "sum-once"]), seed=st.integers(0, 2**16))
@example(loss="cross_entropy", parts=[(8, 0), (8, 6)], how="mean", seed=0)  # 8 and 2 targets
@example(loss="cross_entropy", parts=[(8, 0), (8, 6)], how="sum-once", seed=0)
@example(loss="mse", parts=[(8, 0), (3, 0)], how="mean", seed=0)  # a short last micro-batch
def test_means_over_unequal_counts_are_named(loss, parts, how, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    data = []
    for rows, pad in parts:
        x = torch.randn(rows, 4)
        if loss == "cross_entropy":
            y = torch.randint(0, 3, (rows,))
            y[: min(pad, rows - 1)] = -100  # padding, left out by ignore_index
        else:
            y = torch.randn(rows, 3)
        data.append((x, y))
    counts = [float((y != -100).sum()) if loss == "cross_entropy" else float(y.numel())
              for _, y in data]

    def part(x, y, reduction):
        if loss == "cross_entropy":
            return F.cross_entropy(model(x), y, ignore_index=-100, reduction=reduction)
        return F.mse_loss(model(x), y, reduction=reduction)

    # the truth: the gradient of the mean over every entry of the step
    whole = torch.autograd.grad(sum(part(x, y, "sum") for x, y in data) / sum(counts),
                                list(model.parameters()))
    with gradarg.watch(model) as w:
        opt.zero_grad()
        for x, y in data:
            if how == "mean":
                (part(x, y, "mean") / len(data)).backward()
            else:
                (part(x, y, "sum") / sum(counts)).backward()
        stepped = [p.grad.detach().clone() for p in model.parameters()]
        opt.step()
    same = all(torch.allclose(s, g, atol=1e-6) for s, g in zip(stepped, whole, strict=True))
    unequal = max(counts) >= 1.25 * min(counts)
    if how == "sum-once" or len(set(counts)) == 1:
        assert same  # the mean over all entries, as the torch truth says
    text = w.summary()
    found = NAMED.search(text)
    if how == "mean" and len(data) >= 2 and unequal:
        assert not same
        assert found, text
        assert int(found[1]) == len(data)
        assert [float(c) for c in found[3].split(", ")] == counts, (counts, text)
    else:
        assert found is None, text
