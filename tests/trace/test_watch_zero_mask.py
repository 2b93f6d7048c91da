"""Class: a multiplication by a factor that is zero (a drop path applied to a block's whole
output, residual branch and identity together, at a rate that drops every sample; a gate
stuck at zero) makes the gradient of everything before it exactly zero.  When the zero is made
between a module's output and the model's, the watch names the multiplication among the
operations that made it; a mask that keeps some samples makes no zero and nothing of the kind
is said.

The truth comes from torch alone: the masked layer's gradient is exactly zero exactly when
the generated mask is zero for every sample (and the first layer's too when the mask wraps
the sum).  Generated: where the mask applies (the block's sum
or its branch only), how many samples it keeps, the width and the seed.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg


class Blocks(nn.Module):
    def __init__(self, width, keep, where):
        super().__init__()
        self.stem = nn.Linear(4, width)
        self.f = nn.Linear(width, width)
        self.head = nn.Linear(width, 2)
        self.keep, self.where = keep, where

    def forward(self, x):
        h = torch.tanh(self.stem(x))
        mask = torch.zeros(len(x), 1)
        mask[: self.keep] = 1.0
        if self.where == "sum":  # the drop path wraps the residual sum
            h = (h + torch.tanh(self.f(h))) * mask
        else:  # the drop path on the branch only: the identity keeps the gradient
            h = h + torch.tanh(self.f(h)) * mask
        return self.head(h)


@settings(max_examples=20, deadline=None)
@given(width=st.sampled_from([4, 8]), keep=st.integers(0, 3),
       where=st.sampled_from(["sum", "branch"]), seed=st.integers(0, 2**16))
def test_a_multiplication_by_zero_is_named_with_the_zero(width, keep, where, seed):
    torch.manual_seed(seed)
    model = Blocks(width, keep, where)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(6, 4), torch.randint(0, 2, (6,))
    with gradarg.watch(model) as w:
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        # the truth: the branch's layer gets nothing when the mask keeps no sample, and the
        # stem too when the mask wraps the sum
        zero = bool((model.f.weight.grad == 0).all())
        stem = bool((model.stem.weight.grad == 0).all())
        opt.step()
    assert zero == (keep == 0) and stem == (keep == 0 and where == "sum")
    problems = " ".join(w.problems())
    named = "MulBackward0 (mul: zero gradient where the other factor is zero" in problems
    assert named == zero, (keep, where, problems)
