"""Class: a derivative asked for with ``create_graph=True`` (to be differentiated again, as a
physics-informed residual ``u''`` is) that is exactly zero everywhere makes a loss term that
trains nothing; the watch names the call and the piecewise-linear operations of its graph.  A
derivative that is not all zero (a smooth activation, or a first derivative) is not named.

The truth comes from torch alone: the derivative the step computed is all zero (``.any()``),
and the watch says so exactly then.  Generated: the activation (ReLU, LeakyReLU, Tanh, SiLU,
Softplus), the order of the derivative in the loss (1 or 2), the widths and the seed.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg

ACTS = {"ReLU": nn.ReLU, "LeakyReLU": nn.LeakyReLU, "Tanh": nn.Tanh, "SiLU": nn.SiLU,
        "Softplus": nn.Softplus}


@settings(max_examples=25, deadline=None)
@given(act=st.sampled_from(sorted(ACTS)), order=st.integers(1, 2), width=st.integers(4, 12),
       seed=st.integers(0, 2**16))
def test_a_derivative_that_is_zero_everywhere_is_named(act, order, width, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(1, width), ACTS[act](), nn.Linear(width, 1))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.linspace(0.05, 0.95, 16).unsqueeze(1).requires_grad_()
    ends = torch.tensor([[0.0], [1.0]])
    with gradarg.watch(model) as w:
        opt.zero_grad()
        u = model(x)
        d = u
        for _ in range(order):
            d, = torch.autograd.grad(d, x, torch.ones_like(d), create_graph=True)
        residual = (d + 1.0).pow(2).mean()        # u' = -1 or u'' = -1
        (residual + model(ends).pow(2).mean()).backward()
        opt.step()
    zero = not bool(d.detach().any())             # the truth, from torch
    text = w.summary(checks=False)
    named = "returned a derivative that is 0 everywhere" in text
    assert named == zero, text
    if zero:
        assert order == 2 and act in ("ReLU", "LeakyReLU")  # piecewise linear, twice
        assert "piecewise-linear" in text and "ReLU" in text, text
        if act == "ReLU":  # its nodes are in the zero derivative's graph (LeakyReLU's not)
            assert "ReluBackward0" in text, text
