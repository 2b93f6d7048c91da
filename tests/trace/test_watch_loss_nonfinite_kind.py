"""Class: what the summary says a non-finite loss was is what it held: ``+inf``, ``-inf``,
``NaN`` or several of them (several losses passed to one ``backward()``), never "NaN" for a
loss that was only infinite.

The truth comes from torch alone: the values of the losses passed to ``backward()``.
Generated: how each loss is made non-finite (the log of 0, its negative, the log of a negative
number, or not at all), how many losses are passed together, the widths.
"""

from __future__ import annotations

import re

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg

# a constant term (no history: the parameters' gradients stay finite) that makes a loss
# non-finite, or not
MAKERS = {
    "log0": lambda: torch.log(torch.zeros(())),  # -inf
    "neglog0": lambda: -torch.log(torch.zeros(())),  # +inf
    "lognegative": lambda: torch.log(-torch.ones(())),  # NaN
    "finite": lambda: torch.zeros(()),
}


@settings(max_examples=40, deadline=None)
@given(kinds=st.lists(st.sampled_from(sorted(MAKERS)), min_size=1, max_size=3),
       width=st.integers(2, 8), seed=st.integers(0, 2**16))
def test_the_stated_kind_is_the_observed_one(kinds, width, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, width), nn.Tanh(), nn.Linear(width, 1))
    x, y = torch.randn(6, 4), torch.randn(6, 1)
    with gradarg.watch(model) as w:
        out = model(x)
        base = nn.functional.mse_loss(out, y)
        losses = [base + MAKERS[k]() for k in kinds]
        torch.autograd.backward(losses)
    values = torch.stack([t.detach() for t in losses])
    truth = [word for word, test in (("NaN", torch.isnan), ("+inf", torch.isposinf),
                                     ("-inf", torch.isneginf)) if bool(test(values).any())]
    text = w.summary(checks=False)
    said = "the loss passed to backward() is "
    if not truth:
        assert said not in text
        return
    assert all(bool(torch.isfinite(p.grad).all()) for p in model.parameters())
    assert said + " and ".join(truth) + " (" in text, (kinds, text)
    if "NaN" not in truth:  # an infinite loss is never called NaN
        assert not re.search(r"loss passed to backward\(\) (is|was)( itself)? NaN", text), text
