"""Custom Functions of ordinary layer size with a wrong backward, and backwards that are not
meant to be the derivative of their forward (straight-through estimators, gradient reversal).

Used by ``tests/check/test_check_bounded.py`` and ``benchmarks/check_bounded.py``.
"""

from __future__ import annotations

import torch

F64 = torch.float64


class LinearForgotBias(torch.autograd.Function):
    """``x @ w.T + b``; the backward returns no gradient for ``b``."""

    @staticmethod
    def forward(ctx, x, w, b):
        ctx.save_for_backward(x, w)
        return x @ w.T + b

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g @ w, g.T @ x, None


class LayerNormWrongDim(torch.autograd.Function):
    """Normalise each row over its last dim; the backward reduces over dim 0 instead."""

    @staticmethod
    def forward(ctx, x):
        xc = x - x.mean(-1, keepdim=True)
        sigma = (xc.pow(2).mean(-1, keepdim=True) + 1e-5).sqrt()
        y = xc / sigma
        ctx.save_for_backward(y, sigma)
        return y

    @staticmethod
    def backward(ctx, g):
        y, sigma = ctx.saved_tensors
        # right: (g - g.mean(-1) - y * (g * y).mean(-1)) / sigma
        return (g - g.mean(0, keepdim=True) - y * (g * y).mean(0, keepdim=True)) / sigma


def linear_inputs(dtype=F64, seed=0, batch=32, n_in=64, n_out=64):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(batch, n_in, generator=g, dtype=F64)
    w = torch.randn(n_out, n_in, generator=g, dtype=F64) / n_in ** 0.5
    b = torch.randn(n_out, generator=g, dtype=F64)
    return tuple(t.to(dtype).requires_grad_() for t in (x, w, b))


def layer_norm_inputs(dtype=F64, seed=0, batch=32, n=64):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(batch, n, generator=g, dtype=F64).to(dtype).requires_grad_(),)


class RoundSTE(torch.autograd.Function):
    """Round in the forward, pass the gradient straight through in the backward."""

    @staticmethod
    def forward(ctx, x):
        return torch.round(x)

    @staticmethod
    def backward(ctx, g):
        return g


class SignSTE(torch.autograd.Function):
    """``sign`` in the forward, the derivative of ``hardtanh`` in the backward."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sign(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * (x.abs() <= 1).to(g.dtype)


class GradReverse(torch.autograd.Function):
    """Identity in the forward, ``-scale * g`` in the backward (domain-adversarial training)."""

    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = scale
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):
        return -ctx.scale * g, None


class PassThroughClamp(torch.autograd.Function):
    """``clamp(x, lo, hi)`` whose backward passes the gradient everywhere."""

    @staticmethod
    def forward(ctx, x, lo, hi):
        return x.clamp(lo, hi)

    @staticmethod
    def backward(ctx, g):
        return g, None, None
