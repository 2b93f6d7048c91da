"""Class: an optimizer step that raised inside the block, the exception caught there (a
``try`` around ``optimizer.step()``), is named instead of "ok": the step began and never
finished, so it updated nothing.

The truth comes from torch alone: the exception the test caught and the parameters before and
after.  Generated: how the step raises (a sparse optimizer given a dense gradient, an
optimizer whose step raises, a closure that raises) and controls that do not raise, the
widths, the number of iterations.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg


class Failing(torch.optim.SGD):
    def step(self, closure=None):  # a custom optimizer whose update fails halfway
        raise RuntimeError("update failed")


def make(kind: str, params):
    if kind == "sparse adam, dense gradient":
        return torch.optim.SparseAdam(params)
    if kind == "failing step":
        return Failing(params, lr=0.1)
    return torch.optim.Adam(params, lr=0.01)


@settings(max_examples=25, deadline=None)
@given(kind=st.sampled_from(["sparse adam, dense gradient", "failing step", "closure raises",
                             "healthy"]),
       width=st.integers(2, 5), steps=st.integers(1, 2), seed=st.integers(0, 2**16))
def test_a_step_that_raised_inside_the_block_is_named(kind, width, steps, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(3, width), nn.Tanh(), nn.Linear(width, 1))
    opt = make(kind, model.parameters())
    x, y = torch.randn(6, 3), torch.randn(6, 1)
    before = [p.detach().clone() for p in model.parameters()]
    caught = []

    def closure():
        raise ValueError("closure failed")

    with gradarg.watch(model) as w:
        for _ in range(steps):
            opt.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            try:
                opt.step(closure) if kind == "closure raises" else opt.step()
            except (RuntimeError, ValueError) as e:
                caught.append(e)
    moved = any(not torch.equal(b, p) for b, p in zip(before, model.parameters(), strict=True))
    truth = bool(caught)
    assert truth == (kind != "healthy") and moved == (not truth)
    text = w.summary(checks=False)
    said = "optimizer step raised" in text and type(opt).__name__ in text
    assert said == truth, (kind, text)
    assert text.startswith("gradients ok") == (not truth), text
