"""Class: a non-finite loss made by an operation whose value is infinite where its
derivative is too (``exp`` overflowing, ``log`` of a value that underflowed to 0) is located
by the values the graph saved: the summary names the operation and how many entries, beside
the non-finite gradient.  A loss that stays finite says nothing of the kind.

The truth comes from torch alone: the entries of ``exp(z)`` that are infinite, or of the
density sum that are exactly 0, counted by the test from the same tensors.  Generated: the
operation, how far the inputs are scaled out of range (or not), the widths and the seed.
"""

from __future__ import annotations

import re

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg


@settings(max_examples=30, deadline=None)
@given(op=st.sampled_from(["exp", "log"]), scale=st.sampled_from([1.0, 40.0, 400.0]),
       width=st.integers(2, 6), seed=st.integers(0, 2**16))
def test_an_overflow_or_underflow_is_located(op, scale, width, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(3, width), nn.Tanh(), nn.Linear(width, 4))
    x = scale * torch.randn(16, 3)
    with gradarg.watch(model) as w:
        z = model(x)
        if op == "exp":  # a log-link rate read as exp(z)
            inner = z * scale
            loss = inner.exp().mean()
        else:  # a density summed, then its log
            inner = torch.exp(-(z * scale) ** 2).sum(1)
            loss = -inner.log().mean()
        loss.backward()
    # the truth, from the same tensors
    k = int(torch.isinf(inner.detach().exp()).sum()) if op == "exp" else \
        int((inner.detach() == 0).sum())
    n = inner.numel()
    text = w.summary(checks=False)
    said = re.search(r"(exp overflowed to inf in|log of) (\d+) of (\d+) entries", text)
    assert bool(said) == (k > 0), text
    if said:
        assert (int(said.group(2)), int(said.group(3))) == (k, n), text
        assert said.group(1).startswith(op), text
