"""Class: a NaN made in the forward by an operation evaluated outside its domain (``acosh`` of a
hyperbolic distance's argument below 1 once embeddings leave the Poincare ball, ``sqrt`` or
``log`` of a negative number, ``acos`` beyond ±1) is placed at that operation with the count of
its input's entries outside the domain, and the domain as the operator catalogue states it.  A
Poincare-embedding step trained with plain SGD was placed at the ``log_softmax`` after the
``acosh`` (no node keeps ``acosh``'s output) with no word of why; and the text said "whose value
is infinite at x = ±1" of ``acos``, whose value there is finite.

Invariant: the count stated equals torch's own count of NaN entries of the operation's output;
an operation that is only infinite (``log(0)``) is not said to be outside its domain; no NaN,
no claim.  Truth from torch alone.  Generated: the operation, the input's values (a share
outside the domain, exact boundary values), the size and seed.
"""

from __future__ import annotations

import re

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg

OPS = {  # the operation, a value inside and one outside its domain, its domain as stated
    "acosh": (torch.acosh, 1.5, 0.5, "x ≥ 1"),
    "sqrt": (torch.sqrt, 2.0, -1.0, "x ≥ 0"),
    "log": (torch.log, 2.0, -1.0, "x ≥ 0"),
    "acos": (torch.acos, 0.5, 1.5, "|x| ≤ 1"),
    "asin": (torch.asin, -0.5, -1.5, "|x| ≤ 1"),
    "atanh": (torch.atanh, 0.5, 1.5, "|x| ≤ 1"),
    "log1p": (torch.log1p, 0.5, -2.0, "x ≥ -1"),
}
NODE = {"log1p": "log1_p"}


class Inner(nn.Module):
    def __init__(self, op, n):
        super().__init__()
        self.op = op
        self.scale = nn.Parameter(torch.ones(n))

    def forward(self, x):
        return OPS[self.op][0](x * self.scale)


class Model(nn.Module):
    def __init__(self, op, n):
        super().__init__()
        self.inner = Inner(op, n)
        self.head = nn.Linear(n, 1)

    def forward(self, x):
        return self.head(self.inner(x))


@settings(max_examples=30, deadline=None)
@given(op=st.sampled_from(sorted(OPS)), n=st.integers(2, 6), rows=st.integers(1, 8),
       outside=st.floats(0, 1), boundary=st.booleans(), zero=st.booleans(),
       seed=st.integers(0, 2**16))
def test_a_forward_nan_outside_the_domain_is_counted(op, n, rows, outside, boundary, zero,
                                                      seed):
    fn, good, bad, domain = OPS[op]
    g = torch.Generator().manual_seed(seed)
    pick = torch.rand(rows, n, generator=g) < outside
    x = torch.where(pick, torch.tensor(bad), torch.tensor(good))
    x = x + 0.01 * torch.rand(rows, n, generator=g) * torch.sign(x)  # not all equal
    if boundary:  # the domain's edge itself (acosh(1) = 0, sqrt(0) = 0, acos(1) = 0)
        x[0, 0] = {"acosh": 1.0, "acos": 1.0, "asin": -1.0, "atanh": 0.0,
                   "log1p": -1.0}.get(op, 0.0)
    if zero and op == "log":  # log(0) = -inf: infinite, not outside the domain
        x[0, 0] = 0.0
    torch.manual_seed(seed)
    model = Model(op, n)
    with gradarg.watch(model) as w:
        model(x).sum().backward()
    # the truth, torch alone
    with torch.no_grad():
        value = fn(x)
    k = int(value.isnan().sum())
    text = w.summary(checks=False)
    node = NODE.get(op, op)
    if k:
        assert f"at its operation {node} (" in text, text
        stated = re.search(r"where (\d+) of (\d+) entries of its input lie outside its domain "
                           r"(.+?) \(its value is NaN there\)", text)
        assert stated is not None, text
        assert (int(stated[1]), int(stated[2])) == (k, x.numel()), text
        assert stated[3] == domain, text
    else:
        assert "outside its domain" not in text, text
        if not bool(torch.isfinite(value).all()):  # log(0), log1p(-1): infinite
            assert "whose derivative is infinite at x = " in text, text
        else:  # a finite forward: nothing made there (a boundary's gradient may be NaN)
            assert "forward pass" not in text, text
