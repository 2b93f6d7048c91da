"""Class: a module whose gradient is all zero because the model's own forward multiplied its
output by a constant that is exactly 0 (a fade-in or blend weight computed as ``step // n``,
a coefficient at 0) is named with that product and its factor's value, read at the
``backward()`` call; a factor that is not 0, or one that is a trained parameter, is not said
to be a constant 0.

The truth comes from torch alone: ``.grad`` of the blended branch's parameters after the
backward, and the factor's value (``1 - a`` weighs the other branch: 0 when ``a`` is 1).  Generated: how the weight is given (a Python int from an
integer division, a float, a 0-dim tensor, a trained parameter), its value, the widths, and
which branch the weight multiplies.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg

SAID = "multiplied by a factor that is exactly 0"


class Blend(nn.Module):
    def __init__(self, width: int, form: str, value: float):
        super().__init__()
        self.base = nn.Linear(4, width)
        self.old, self.new = nn.Linear(width, 2), nn.Linear(width, 2)
        self.form, self.value = form, value
        self.gate = nn.Parameter(torch.tensor(value)) if form == "parameter" else None

    def alpha(self):
        if self.form == "int_division":  # step // fade_steps
            return int(self.value * 100) // 100
        if self.form == "float":
            return float(self.value)
        if self.form == "tensor":
            return torch.tensor(self.value)
        return self.gate

    def forward(self, x):
        h = torch.tanh(self.base(x))
        a = self.alpha()
        return (1 - a) * self.old(h) + a * self.new(h)


@settings(max_examples=40, deadline=None)
@given(form=st.sampled_from(["int_division", "float", "tensor", "parameter"]),
       value=st.sampled_from([0.0, 0.3, 0.99, 1.0]), width=st.integers(2, 8),
       seed=st.integers(0, 2**16))
def test_a_product_by_a_constant_zero_is_named(form, value, width, seed):
    torch.manual_seed(seed)
    model = Blend(width, form, value)
    a = model.alpha()
    factor = float(a.detach()) if isinstance(a, torch.Tensor) else float(a)
    with gradarg.watch(model) as w:
        model(torch.randn(8, 4)).pow(2).mean().backward()
    # the truth, from torch: the new branch is weighted by a, the old one by 1 - a
    new_zero = all(bool((p.grad == 0).all()) for p in model.new.parameters())
    old_zero = all(bool((p.grad == 0).all()) for p in model.old.parameters())
    assert (new_zero, old_zero) == (factor == 0, factor == 1)
    text = w.summary(checks=False)
    constant = form != "parameter"  # 1 - gate has history: not a constant
    assert (SAID in text) == ((new_zero or old_zero) and constant), (form, value, text)
