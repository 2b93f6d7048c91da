"""Class: ``.grad`` that sums two backward passes taken at different parameter values (an
edit in place between them, as an inner step written on the model's own weights, or an
optimizer step) is never called gradient accumulation over micro-batches, whether or not an
optimizer step ran later in the block; passes at the same values are.

The truth comes from torch: the parameters' values at each pass (the test's own copies) and
whether ``.grad`` was reset between them.  Generated: what runs between the two passes
(nothing, an in-place edit under ``no_grad``, an optimizer step), a final optimizer step or
not, the seed.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg

MICRO = "gradient accumulation over micro-batches"
STALE = ".grad already held a gradient"


@settings(max_examples=25, deadline=None)
@given(between=st.sampled_from(["nothing", "edit", "step"]), final=st.booleans(),
       seed=st.integers(0, 2**16))
def test_passes_at_different_values_are_not_micro_batches(between, final, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x1, y1, x2, y2 = torch.randn(5, 4), torch.randn(5, 2), torch.randn(5, 4), torch.randn(5, 2)
    with gradarg.watch(model) as w:
        opt.zero_grad()
        at1 = [p.detach().clone() for p in model.parameters()]
        F.mse_loss(model(x1), y1).backward()
        if between == "edit":
            with torch.no_grad():
                for p in model.parameters():
                    p -= 0.05 * p.grad  # an inner step on the model's own weights
        elif between == "step":
            opt.step()
        at2 = [p.detach().clone() for p in model.parameters()]
        F.mse_loss(model(x2), y2).backward()
        if final:
            opt.step()
    moved = any(not torch.equal(a, b) for a, b in zip(at1, at2, strict=True))
    assert moved == (between != "nothing")  # the truth, from torch
    text = w.summary()
    if moved:  # a problem when a step read the sum, a note when none did (yet)
        assert MICRO not in text, text
        assert STALE in text if final else "sums gradients from before and after" in text, text
    else:
        assert MICRO in text, text
