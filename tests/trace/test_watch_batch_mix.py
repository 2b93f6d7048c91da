"""Class: a per-example tensor broadcast against the wrong dimensions of another, so that
examples mix (FiLM's ``gamma * h`` with ``gamma`` of shape ``(N, C)`` and ``h`` of shape ``(N, C,
H, W)``, without ``gamma[:, :, None, None]``; nothing raises when ``H == N`` and ``W == C``).
The watch said "ok".

Invariant: named exactly when, by torch's own account, example 0's output depends on another
example's conditioning input (a nonzero entry of the Jacobian across examples), with the two
shapes and the reshaped one.  Look-alikes: the scale reshaped to ``(N, C, 1, 1)``; a constant
``(T, T)`` mask and a learned ``(T, T)`` parameter multiplied into ``(N, T, T)`` scores with
``N == T``.  Generated: the setup, the sizes, the seed.
"""

from __future__ import annotations

import re

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg


class FiLMNet(nn.Module):
    def __init__(self, c, setup):
        super().__init__()
        self.setup = setup
        self.conv = nn.Conv2d(2, c, 3, padding=1)
        self.film = nn.Linear(3, 2 * c)
        self.bias = nn.Parameter(torch.randn(4, 4))
        self.head = nn.Linear(c, 1)

    def forward(self, images, cond):
        h = self.conv(images)
        gamma, beta = self.film(cond).chunk(2, dim=1)
        if self.setup == "reshaped":
            gamma, beta = gamma[:, :, None, None], beta[:, :, None, None]
        if self.setup in ("film", "reshaped"):
            h = torch.tanh(gamma * h + beta)
        else:  # scores (N, T, T) with N == T: a mask or a learned bias multiplied in
            scores = h.mean(1)  # (N, H, W) with H == W == T
            t = scores.shape[-1]
            other = (torch.ones(t, t).tril() if self.setup == "mask"
                     else self.bias[:t, :t])
            h = torch.tanh(h + (scores * other)[:, None] + gamma[:, :, None, None])
        return self.head(h.mean((2, 3)))


@settings(max_examples=20, deadline=None)
@given(setup=st.sampled_from(["film", "reshaped", "mask", "learned"]), n=st.integers(2, 4),
       seed=st.integers(0, 2**16))
def test_examples_mixed_by_a_broadcast_are_named(setup, n, seed):
    torch.manual_seed(seed)
    c = n  # FiLM: (N, C) meets (H, W) = (N, C); scores: (N, T, T) with T == N
    model = FiLMNet(c, setup)
    images, cond = torch.randn(n, 2, n, c), torch.randn(n, 3)
    with gradarg.watch(model) as w:
        model(images, cond).sum().backward()
    # the truth: does example 0's output depend on example 1's conditioning?
    check(w, lambda z: model(images, z), cond, (f"{n}, {c}", f"{n}, {c}, {n}, {c}"),
          f"({n}, {c}, 1, 1)")


def check(w, f, x, shapes, fixed):
    """Said exactly when example 0's output of ``f`` depends on another example of ``x``
    (torch's Jacobian), with the operands' ``shapes`` and the ``fixed`` one."""
    jac = torch.autograd.functional.jacobian(lambda z: f(z)[0].sum(), x)
    mixed = bool(jac[1:].abs().sum() > 0)
    text = w.summary(checks=False)
    said = re.search(r"a product broadcast an operand of shape \((.*?)\) against one of shape "
                     r"\((.*?)\)", text)
    assert (said is not None) == mixed, text
    if said:
        assert (said[1], said[2]) == shapes, text
        assert f"needs shape {fixed}" in text, text


class Cross(nn.Module):
    """A Deep & Cross Network's cross layer, ``x0 * (xl . w) + b + xl``: ``setup`` "cross" takes
    ``xl @ w`` of shape ``(N,)`` against ``x0`` of shape ``(N, d)``; "cross-keepdim" unsqueezes it
    to ``(N, 1)``; "gate" multiplies by a learned per-feature gate of shape ``(d,)``."""

    def __init__(self, d, setup):
        super().__init__()
        self.setup = setup
        self.embed = nn.Linear(3, d)
        self.w = nn.Parameter(torch.randn(d) / d**0.5)
        self.gate = nn.Parameter(torch.randn(d))
        self.head = nn.Linear(d, 1)

    def forward(self, x):
        x0 = torch.tanh(self.embed(x))
        s = x0 @ self.w
        if self.setup == "gate":
            h = x0 * torch.sigmoid(self.gate)
        else:
            h = x0 * (s.unsqueeze(-1) if self.setup == "cross-keepdim" else s) + x0
        return self.head(h)


@settings(max_examples=20, deadline=None)
@given(setup=st.sampled_from(["cross", "cross-keepdim", "gate"]), n=st.integers(2, 6),
       square=st.booleans(), seed=st.integers(0, 2**16))
def test_a_per_example_scalar_broadcast_over_the_batch_is_named(setup, n, square, seed):
    torch.manual_seed(seed)
    d = n if square else n + 1  # the (N,) meets the feature axis only when d == N
    model = Cross(d, setup)
    x = torch.randn(n, 3)
    if setup == "cross" and not square:
        return  # (N,) against (N, N + 1) raises in torch: nothing to watch
    with gradarg.watch(model) as w:
        model(x).sum().backward()
    check(w, model, x, (f"{n},", f"{n}, {d}"), f"({n}, 1)")
