"""Class: parameters whose gradient is exactly zero because every path to them passes through a
product with all-zero factors are called a fixed point ("nothing moves, now or at any later
step") only when those factors get an exactly zero gradient too, so that no optimizer step can
move them; a zero factor that gets a gradient (LoRA's B, a ReZero gate) is not.

The truth comes from torch alone: two SGD steps, and whether any parameter moved.  Generated:
which of the two factors of ``x @ A @ B`` (and a gate) start at zero, the widths, the seed.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg

SAID = "fixed point of gradient descent"


class Factored(nn.Module):
    def __init__(self, d: int, r: int, zero_a: bool, zero_b: bool):
        super().__init__()
        self.a = nn.Linear(d, r, bias=False)
        self.b = nn.Linear(r, d, bias=False)
        self.c = nn.Linear(d, d, bias=False)  # multiplied elementwise with b's output
        for layer, zero in ((self.a, zero_a), (self.b, zero_b), (self.c, zero_b)):
            if zero:
                nn.init.zeros_(layer.weight)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(self.a(x)) * self.c(x)


@settings(max_examples=20, deadline=None)
@given(d=st.integers(2, 8), r=st.integers(1, 4), zero_a=st.booleans(), zero_b=st.booleans(),
       seed=st.integers(0, 2**16))
def test_a_fixed_point_only_when_no_factor_can_move(d, r, zero_a, zero_b, seed):
    torch.manual_seed(seed)
    model = Factored(d, r, zero_a, zero_b)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(16, d), torch.randn(16, d)
    start = [p.detach().clone() for p in model.parameters()]
    with gradarg.watch(model) as w:
        for _ in range(2):
            opt.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            opt.step()
    # the truth: no parameter moved in two steps
    stuck = all(torch.equal(p, s) for p, s in zip(model.parameters(), start, strict=True))
    text = w.summary(checks=False)
    assert (SAID in text) == stuck, (zero_a, zero_b, text)
