"""Class: a parameter clamped in the forward (``scale.clamp(max=b)``) whose value is past the
bound gets an exactly zero gradient (clamp's derivative is 0 outside its range), and no step
brings it back; the watch says so with the bound and the value.  Inside the bound, or
clamped in place after the step, nothing is said.

The truth comes from torch: the parameter's ``.grad`` after the backward (zero exactly when
its value is past the bound).  Generated: max or min bound, the value inside or past it, a
scalar or a vector of scales, the seed.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg

SAID = "is past that bound at every entry"


class Scaled(nn.Module):
    def __init__(self, size, kind, bound, value, mask=None):
        super().__init__()
        self.proj = nn.Linear(6, 4)
        self.scale = nn.Parameter(torch.full((size,), value) if mask is None else value)
        self.kind, self.bound, self.mask = kind, bound, mask

    def forward(self, x):
        s = self.scale.clamp(max=self.bound) if self.kind == "max" else \
            self.scale.clamp(min=self.bound)
        out = self.proj(x) * s.exp()
        return out if self.mask is None else out * self.mask  # columns that reach nothing


@settings(max_examples=25, deadline=None)
@given(kind=st.sampled_from(["max", "min"]), past=st.booleans(), size=st.sampled_from([1, 4]),
       seed=st.integers(0, 2**16))
def test_a_parameter_clamped_past_its_bound_is_named(kind, past, size, seed):
    """(Past the bound or inside it, every entry the same.)"""
    torch.manual_seed(seed)
    bound = 1.5
    inside = bound - 0.5 if kind == "max" else bound + 0.5
    outside = bound + 0.5 if kind == "max" else bound - 0.5
    model = Scaled(size, kind, bound, outside if past else inside)
    x, y = torch.randn(8, 6), torch.randint(0, 4, (8,))
    with gradarg.watch(model) as w:
        F.cross_entropy(model(x), y).backward()
    zero = bool((model.scale.grad == 0).all())
    assert zero == past  # the truth, from torch
    text = w.summary()
    assert (SAID in text) == past, text
    if past:
        assert f"clamp({kind}={bound:.4g})" in text


@settings(max_examples=10, deadline=None)
@given(kind=st.sampled_from(["max", "min"]), seed=st.integers(0, 2**16))
def test_a_zero_gradient_not_made_by_the_clamp_alone_is_not_put_down_to_it(kind, seed):
    """Two entries past the bound, two inside it whose outputs reach nothing: the gradient
    is all zero, but not every entry is past the bound, so the clamp is not named."""
    torch.manual_seed(seed)
    bound = 1.5
    inside = bound - 0.5 if kind == "max" else bound + 0.5
    outside = bound + 0.5 if kind == "max" else bound - 0.5
    value = torch.tensor([outside, outside, inside, inside])
    model = Scaled(4, kind, bound, value, mask=torch.tensor([1.0, 1.0, 0.0, 0.0]))
    x, y = torch.randn(8, 6), torch.randint(0, 4, (8,))
    with gradarg.watch(model) as w:
        F.cross_entropy(model(x), y).backward()
    assert bool((model.scale.grad == 0).all())  # the truth, from torch
    assert SAID not in w.summary()
