"""Class: a loss whose value is NaN while every gradient is finite (``log`` of a negative
number: the derivative ``1/x`` is finite there) is named instead of "ok", with the operation
outside its domain and how many entries; a NaN that reaches the gradients is the non-finite
finding's, and a finite loss says nothing of the kind.

The truth comes from torch alone: the loss's value, every ``.grad`` after the backward, and
the entries of the operation's input outside its domain, counted by the test.  Generated: the
operation, how far the input is shifted out of its domain (or not), the model's widths.
"""

from __future__ import annotations

import math
import re

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg

SAID = re.compile(r"the loss passed to backward\(\) is (NaN|\+inf|-inf)")

# name -> (function, entries outside its domain, how the summary names them)
OPS = {
    "log": (torch.log, lambda x: x < 0, "log of {k} negative entries"),
    "log2": (torch.log2, lambda x: x < 0, "log2 of {k} negative entries"),
    "log1p": (torch.log1p, lambda x: x < -1, "log1p of {k} entries below -1"),
    "sqrt": (torch.sqrt, lambda x: x < 0, "sqrt of {k} negative entries"),
    "acos": (torch.acos, lambda x: x.abs() > 1, "acos of {k} entries beyond ±1"),
    "atanh": (torch.atanh, lambda x: x.abs() > 1, "atanh of {k} entries beyond ±1"),
}


class Scaled(nn.Module):
    def __init__(self, n: int, op: str, shift: float):
        super().__init__()
        self.lin = nn.Linear(3, 1)
        self.scale = nn.Parameter(torch.linspace(0.2, 0.9, n))
        self.op, self.shift = op, shift

    def forward(self, x):
        # the op's input: within its domain for shift 0, some entries outside for shift > 0
        inside = self.scale * (0.9 if self.op in ("acos", "atanh") else 1.0)
        arg = inside - self.shift if self.op not in ("acos", "atanh") else inside + self.shift
        return self.lin(x), OPS[self.op][0](arg).sum(), arg


@settings(max_examples=40, deadline=None)
@given(op=st.sampled_from(sorted(OPS)), shift=st.sampled_from([0.0, 0.5, 0.85, 1.5, 2.5]),
       n=st.integers(2, 6), seed=st.integers(0, 2**16))
def test_a_nan_loss_with_finite_gradients_is_named(op, shift, n, seed):
    torch.manual_seed(seed)
    model = Scaled(n, op, shift)
    x, y = torch.randn(8, 3), torch.randn(8, 1)
    with gradarg.watch(model) as w:
        out, term, arg = model(x)
        loss = nn.functional.mse_loss(out, y) - 0.1 * term
        loss.backward()
    grads_finite = all(bool(torch.isfinite(p.grad).all()) for p in model.parameters())
    truth = (not bool(torch.isfinite(loss))) and grads_finite
    text = w.summary(checks=False)
    said = bool(SAID.search(text))
    assert said == truth, (op, shift, text)
    if truth:
        k = int(OPS[op][1](arg.detach()).sum())
        assert OPS[op][2].format(k=k) in text, (k, text)
        assert not text.startswith("gradients ok")


def test_a_nan_that_reaches_the_gradients_is_not_this_finding():
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    with gradarg.watch(model) as w:
        out = model(torch.randn(4, 3))
        torch.sqrt(out - 10).sum().backward()  # sqrt's derivative is NaN there too
    text = w.summary(checks=False)
    assert "non-finite gradient" in text
    assert not SAID.search(text)


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_a_loss_made_nonfinite_by_a_constant_is_said_without_a_made_up_cause(value):
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    with gradarg.watch(model) as w:
        loss = model(torch.randn(4, 3)).sum() + torch.tensor(value)
        loss.backward()
    text = w.summary(checks=False)
    kind = "NaN" if math.isnan(value) else "+inf"
    assert f"the loss passed to backward() is {kind} (" in text
    assert "no operation outside its domain was found" in text
