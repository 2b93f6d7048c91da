"""Class: when the forward makes the first NaN/Inf inside a module, the watch names the module
and the operation that made it, including an operation whose output no autograd node saves
(``torch.linalg.slogdet`` of a singular matrix: ``log|det| = -inf``, kept by no node, so only
computing it again from the matrix it saved shows it).  A module with a zero-initialised
square weight under ``slogdet`` (a normalizing flow's invertible layer) was located at the
whole model, with no operation named.

The truth comes from torch alone: ``torch.linalg.matrix_rank`` of the weight, and whether
the forward's values are finite.  Generated: the weight's rank (full, or rows zeroed or
repeated), the operation (``slogdet``, or ``log`` of a product that can be 0), the size and
seed.
"""

from __future__ import annotations

import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg


class Logdet(nn.Module):
    def __init__(self, weight, op):
        super().__init__()
        self.weight, self.op = nn.Parameter(weight), op

    def forward(self, x):
        z = x @ self.weight.T
        if self.op == "slogdet":
            return z, torch.linalg.slogdet(self.weight)[1].expand(x.shape[0])
        return z, torch.log(self.weight.abs().prod(1)).sum().expand(x.shape[0])


class Flow(nn.Module):
    def __init__(self, weight, op, n):
        super().__init__()
        self.inv = Logdet(weight, op)
        self.head = nn.Linear(n, n)

    def forward(self, x):
        z, logdet = self.inv(x)
        return self.head(z), logdet


@settings(max_examples=20, deadline=None)
@given(n=st.integers(2, 5), rank=st.sampled_from(["full", "zero-row", "repeated", "zero"]),
       op=st.sampled_from(["slogdet", "slogdet", "log"]), seed=st.integers(0, 2**16))
@example(n=4, rank="repeated", op="slogdet", seed=1)  # a finite slogdet of a singular matrix
def test_the_operation_that_made_the_first_nan_is_named(n, rank, op, seed):
    torch.manual_seed(seed)
    weight = torch.linalg.qr(torch.randn(n, n))[0] + 0.1 * torch.randn(n, n)
    if rank == "zero-row":
        weight[0] = 0
    elif rank == "repeated":
        weight[1] = weight[0]
    elif rank == "zero":
        weight = torch.zeros(n, n)
    model = Flow(weight.clone(), op, n)
    x = torch.randn(16, n)
    with gradarg.watch(model) as w:
        z, logdet = model(x)
        (0.5 * z.pow(2).sum(1) - logdet).mean().backward()
    # the truth, from torch: slogdet's value (-inf for an exactly singular matrix; a repeated
    # row can leave a tiny pivot in float32 after rounding, and a finite log-determinant);
    # log(prod |row|) is -inf when a row is all zero (a repeated row keeps every product
    # nonzero)
    bad = not bool(torch.isfinite(torch.linalg.slogdet(weight)[1] if op == "slogdet"
                                  else torch.log(weight.abs().prod(1))).all())
    if op == "log":
        assert bad == bool((weight.abs().prod(1) == 0).any())
    text = w.summary()
    named = "module 'inv' (Logdet), whose input is finite (checked) and whose output is not"
    if not bad:
        assert "NaN/Inf" not in text, text
        return
    assert named in text, text
    if op == "slogdet":
        assert "at its operation linalg_slogdet (LinalgSlogdetBackward0)" in text, text
        assert "singular matrix" in text, text
    else:
        assert "at its operation log (LogBackward0)" in text, text
