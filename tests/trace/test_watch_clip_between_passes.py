"""Class: ``clip_grad_norm_`` inside a gradient-accumulation loop (after every micro-batch's
backward) clips each partial sum, so the step reads neither the summed gradient nor that
sum clipped.  The watch names the scaling between passes, with how many points; clipping
once after the last backward, or no clipping, says nothing of the kind.

The truth comes from torch alone: each micro-batch's gradient from ``torch.autograd.grad``,
replayed by hand (sum, clip where the code clips), tells at which points between passes the
clip changed ``.grad`` (total norm above ``max_norm``).  Generated: the micro-batches, where
clipping runs (each tensor clipped on its own in the loop: factors that differ, not named
here), ``max_norm`` (some large enough never to clip) and the seed.
"""

from __future__ import annotations

import re

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg


@settings(max_examples=25, deadline=None)
@given(micro=st.integers(2, 5),
       where=st.sampled_from(["each", "each", "once", "none", "per-tensor"]),
       max_norm=st.sampled_from([0.01, 0.1, 1e3]), seed=st.integers(0, 2**16))
def test_clipping_inside_the_accumulation_loop_is_named(micro, where, max_norm, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    xs, ys = torch.randn(micro, 4, 5), torch.randn(micro, 4, 1)
    params = list(model.parameters())
    # the truth: replay the loop by hand from each micro-batch's own gradient
    grads = [torch.autograd.grad(nn.functional.mse_loss(model(x), y), params)
             for x, y in zip(xs, ys, strict=True)]
    acc = [torch.zeros_like(p) for p in params]
    clipped_between = 0
    for i, g in enumerate(grads):
        acc = [a + b for a, b in zip(acc, g, strict=True)]
        if where == "per-tensor":
            acc = [a * min(1.0, max_norm / (float(a.norm()) + 1e-6)) for a in acc]
        total = float(torch.sqrt(sum((a ** 2).sum() for a in acc)))
        if where == "each" and total > max_norm:
            acc = [a * (max_norm / (total + 1e-6)) for a in acc]
            clipped_between += i < micro - 1  # a point between two passes
    total = float(torch.sqrt(sum((a ** 2).sum() for a in acc)))
    if where == "once" and total > max_norm:
        acc = [a * (max_norm / (total + 1e-6)) for a in acc]
    with gradarg.watch(model) as w:
        opt.zero_grad()
        for x, y in zip(xs, ys, strict=True):
            nn.functional.mse_loss(model(x), y).backward()
            if where == "each":
                nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            elif where == "per-tensor":  # each tensor by its own factor: not one factor
                for p in params:
                    nn.utils.clip_grad_norm_(p, max_norm)
        if where == "once":
            nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        for p, a in zip(params, acc, strict=True):  # the replay is what .grad holds
            assert torch.allclose(p.grad, a, rtol=1e-4, atol=1e-7)
        opt.step()
    text = " ".join(w.problems())
    said = re.search(r"scaled by one factor between backward passes that accumulate into it, "
                     r"at (\d+) of the (\d+) points between the (\d+) passes", text)
    assert bool(said) == (clipped_between > 0), (text, clipped_between)
    if said:
        assert said.groups() == (str(clipped_between), str(micro - 1), str(micro))
