"""Class: ``clip_grad_norm_`` called once per parameter (each tensor clipped to ``max_norm``
on its own) changes the direction of the whole gradient; the watch names it, with the norm
every clipped tensor now has, instead of a generic edit.  Clipping the total norm (one
factor), ``clip_grad_value_``, and no clipping say nothing of the kind.

The truth comes from torch alone: each ``.grad`` before the step against the gradient
``torch.autograd.grad`` gives for the same loss: per-parameter clipping when every tensor
whose norm exceeded ``max_norm`` now has norm ``max_norm`` and the others are unchanged, with
at least two clipped by different factors (so that no single factor explains it).
Generated: max_norm, the way of clipping, the widths, the loss's scale and the seed.
"""

from __future__ import annotations

import re

import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg


@settings(max_examples=30, deadline=None)
@given(max_norm=st.sampled_from([0.05, 0.5, 5.0]),
       how=st.sampled_from(["each", "each", "total", "value", "none"]),
       width=st.integers(3, 10), scale=st.sampled_from([1.0, 30.0]), seed=st.integers(0, 2**16))
@example(max_norm=5.0, how="each", width=6, scale=30.0, seed=0)  # the smallest not clipped
def test_clipping_each_tensor_alone_is_named(max_norm, how, width, scale, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(5, width), nn.Tanh(), nn.Linear(width, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(16, 5), scale * torch.randn(16, 2)
    params = list(model.parameters())
    truth = torch.autograd.grad(nn.functional.mse_loss(model(x), y), params)
    with gradarg.watch(model) as w:
        opt.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        if how == "each":
            for p in params:
                nn.utils.clip_grad_norm_(p, max_norm)
        elif how == "total":
            nn.utils.clip_grad_norm_(params, max_norm)
        elif how == "value":
            nn.utils.clip_grad_value_(params, max_norm / 10)
        held = [p.grad.detach().clone() for p in params]
        opt.step()
    # the truth: which tensors were clipped alone, read from the gradients themselves
    norms = [float(g.norm()) for g in truth]
    clipped = [i for i, g in enumerate(held) if not torch.equal(g, truth[i])]
    alone = (len(clipped) >= 2
             and all(abs(float(held[i].norm()) - max_norm) <= 1e-4 * max_norm for i in clipped)
             and all(norms[i] <= max_norm * 1.001 for i in range(len(params)) if i not in clipped)
             and len({round(float(held[i].norm()) / norms[i], 5) for i in clipped}) >= 2)
    text = w.summary(checks=False)
    said = re.search(r"each tensor clipped to norm (\S+) on its own", text)
    assert bool(said) == (how == "each" and alone), text
    if said:
        assert abs(float(said.group(1)) - max_norm) <= 0.01 * max_norm, text
        assert not text.startswith("gradients ok"), text
