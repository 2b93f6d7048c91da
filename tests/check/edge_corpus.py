"""Custom Functions at the checker's edges (issue 36), each right and with the bug it was
written for, at any size.

- :func:`cumprod`: a cumulative product along the last dimension; the bugs (``"first-zero"``,
  ``"first-zero-safe"``) are the zero-unsafe formula ``revcumsum(g·y) / x`` with the division
  masked where ``x == 0``, wrong only at the first exact zero of each row (a handful of columns
  among thousands).
- :func:`conv1d`: a same-padded 1-D correlation with a hand-written backward; the bug
  (``"wrap"``) takes the border indices modulo the length, so the first and last elements get
  a gradient from the other end, where the Jacobian is zero and the forward is not flat.
- :func:`bucket_sum`: sums of the elements of each row per bucket, index ``-1`` meaning "no
  bucket" (ignored by the forward); the bug (``"wrap"``) gathers ``g[:, index]`` so index
  ``-1`` wraps to the last bucket.
- :func:`leaky_relu`: the bug (``"slice"``) is wrong where ``x < 0`` except at ``x[0]``.
- :func:`sign_ste`: ``sign`` with the derivative of ``hardtanh`` as its backward: a true
  straight-through estimator (no bug; wrong only against the derivative).
- :func:`rmsnorm`: ``x · w / rms(x)``; the bugs round the products ``g·w·x`` to bfloat16
  before their mean (``"bf16-products"``), or sum them in bfloat16 (``"bf16-sum"``).

Which backward is wrong, and where, is known by construction: the true Jacobian comes from the
forward formulas alone (:func:`true_jacobian_entry`, ``torch.func.jvp``).
"""

from __future__ import annotations

import torch

F64 = torch.float64
F32 = torch.float32


def _function(name: str, forward, backward):
    """A fresh ``autograd.Function`` subclass named ``name``."""
    return type(name, (torch.autograd.Function,),
                {"forward": staticmethod(forward), "backward": staticmethod(backward)})


# ------------------------------------------------------------------ cumulative product


def cumprod_forward(x):
    return torch.cumprod(x, -1)


def cumprod(bug: str | None = None):
    """``cumprod(x, -1)``; ``bug="first-zero"``: wrong at each row's first exact zero (the
    division masked by ``torch.where``, whose derivative is ``0/0`` there);
    ``"first-zero-safe"``: the same bug with a safe denominator."""

    def forward(ctx, x):
        y = torch.cumprod(x, -1)
        ctx.save_for_backward(x, y)
        return y

    def backward(ctx, g):
        x, y = ctx.saved_tensors
        gy = (g * y).flip(-1).cumsum(-1).flip(-1)  # sum over i >= j of g_i y_i
        zero = x == 0
        if bug == "first-zero":  # y_i / x_j, with the division by zero masked
            return torch.where(zero, torch.zeros_like(x), gy / x)
        safe = torch.where(zero, torch.ones_like(x), x)
        grad = torch.where(zero, torch.zeros_like(x), gy / safe)
        if bug == "first-zero-safe":  # the same, dividing by 1 where x is zero
            return grad
        # the first zero of a row: y_i / x_z is the product of the others, x_z replaced by 1
        first = zero & (zero.cumsum(-1) == 1)
        if bool(first.any()):
            rows = first.any(-1)
            ones = torch.where(first, torch.ones_like(x), x)[rows]
            y1 = torch.cumprod(ones, -1)
            after = first[rows].cumsum(-1) > 0  # i >= z
            gz = (g[rows] * y1 * after).sum(-1)
            grad = grad.clone()
            grad[first] = gz
        return grad

    return _function(f"Cumprod_{bug or 'right'}", forward, backward).apply


def cumprod_inputs(b: int, n: int, dtype, zeros: int = 16, seed: int = 0) -> torch.Tensor:
    """``b × n`` values near 1 (``exp(0.05 z)``, so that products stay finite), with an exact
    zero in ``zeros`` rows (at most ``b``); the first of them gets a second, later zero, whose
    column is right (the true entries there are zero, and so are the backward's)."""
    g = torch.Generator().manual_seed(seed)
    x = torch.exp(0.05 * torch.randn(b, n, generator=g, dtype=F64))
    rows = torch.randperm(b, generator=g)[:min(zeros, b)]
    cols = torch.randint(0, max(1, n - 1), (rows.numel(),), generator=g)
    x[rows, cols] = 0
    r, c = int(rows[0]), int(cols[0])
    if c < n - 1:
        x[r, c + 1 + (n - 1 - c) // 2] = 0
    return x.to(dtype).requires_grad_()


# ------------------------------------------------------------------ 1-D correlation, same padding

K = 3  # kernel size (P = 1 on each side)


def conv_forward(x, w):
    xp = torch.nn.functional.pad(x, (K // 2, K // 2))
    return sum(w[k] * xp[..., k:k + x.shape[-1]] for k in range(K))


def conv1d(bug: str | None = None):
    """``y[t] = Σ_k w[k] x[t + k - 1]`` (zero-padded) over the last dimension of ``x``;
    ``bug="wrap"``: the backward takes the shifted indices modulo the length."""

    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return conv_forward(x, w)

    def backward(ctx, g):
        x, w = ctx.saved_tensors
        n, p = x.shape[-1], K // 2
        j = torch.arange(n)
        gx = torch.zeros_like(x)
        for k in range(K):
            t = j - k + p  # y[t] uses x[j] through w[k]
            if bug == "wrap":
                gx = gx + w[k] * g[..., t % n]
            else:
                ok = (t >= 0) & (t < n)
                gx = gx + w[k] * torch.where(ok, g[..., t.clamp(0, n - 1)],
                                             torch.zeros_like(g))
        xp = torch.nn.functional.pad(x, (p, p))
        gw = torch.stack([(g * xp[..., k:k + n]).sum() for k in range(K)])
        return gx, gw

    return _function(f"Conv1d_{bug or 'right'}", forward, backward).apply


def conv_inputs(b: int, n: int, dtype, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(b, n, generator=g, dtype=F64).to(dtype).requires_grad_()
    w = torch.tensor([0.25, 0.5, -0.75], dtype=F64).to(dtype).requires_grad_()
    return x, w


# ------------------------------------------------------------------ bucket sums

BUCKETS = 8


def bucket_forward(x, index):
    keep = (index >= 0).to(x.dtype)
    out = torch.zeros(*x.shape[:-1], BUCKETS, dtype=x.dtype)
    return out.index_add(-1, index.clamp_min(0), x * keep)


def bucket_sum(bug: str | None = None):
    """Sums of the elements of each row per bucket (``index[j]`` in ``0..BUCKETS-1``, ``-1``
    for none); ``bug="wrap"``: the backward's gather lets ``-1`` wrap to the last bucket."""

    def forward(ctx, x, index):
        ctx.save_for_backward(index)
        return bucket_forward(x, index)

    def backward(ctx, g):
        (index,) = ctx.saved_tensors
        gx = g[..., index]
        if bug != "wrap":
            gx = gx * (index >= 0).to(g.dtype)
        return gx, None

    return _function(f"BucketSum_{bug or 'right'}", forward, backward).apply


def bucket_inputs(b: int, n: int, dtype, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(b, n, generator=g, dtype=F64).to(dtype).requires_grad_()
    index = torch.randint(0, BUCKETS, (n,), generator=g)
    index[torch.randperm(n, generator=g)[:max(1, n // 16)]] = -1
    return x, index


# ------------------------------------------------------------------ a true straight-through estimator


def sign_ste():
    """``sign(x)``, with ``hardtanh``'s derivative as its backward (meant, not a bug)."""

    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sign(x)

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * (x.abs() <= 1).to(g.dtype)

    return _function("SignSTE", forward, backward).apply


def ste_inputs(b: int, n: int, dtype, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    return (1.5 * torch.randn(b, n, generator=g, dtype=F64)).to(dtype).requires_grad_()


# ------------------------------------------------------------------ leaky ReLU, a slice off by one

SLOPE = 0.01


def leaky_relu_forward(x):
    return torch.where(x > 0, x, SLOPE * x)


def leaky_relu(bug: str | None = None):
    """``leaky_relu(x)`` on a 1-D ``x``; ``bug="slice"``: the backward's negative branch
    writes ``-SLOPE`` into ``grad[1:]`` only, so it is wrong where ``x < 0`` except at
    ``x[0]`` (a region that one right element contradicts)."""

    def forward(ctx, x):
        ctx.save_for_backward(x)
        return leaky_relu_forward(x)

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        slope = torch.where(x > 0, torch.ones_like(x), torch.full_like(x, SLOPE))
        if bug == "slice":
            slope[1:] = torch.where(x[1:] > 0, slope[1:], -slope[1:])
        return g * slope

    return _function(f"LeakyRelu_{bug or 'right'}", forward, backward).apply


# ------------------------------------------------------------------ RMSNorm


def rmsnorm_forward(x, w):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w


def rmsnorm(bug: str | None = None):
    """``x · w / rms(x)``; ``bug="bf16-products"``: the products ``g·w·x`` rounded to bfloat16
    before their mean; ``"bf16-sum"``: their sum taken in bfloat16."""

    def forward(ctx, x, w):
        r = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
        ctx.save_for_backward(x, w, r)
        return x * r * w

    def backward(ctx, g):
        x, w, r = ctx.saved_tensors
        gw = g * w
        if bug == "bf16-products":
            m = (gw * x).to(torch.bfloat16).mean(-1, keepdim=True).to(x.dtype)
        elif bug == "bf16-sum":
            m = (gw * x).to(torch.bfloat16).sum(-1, keepdim=True).to(x.dtype) / x.shape[-1]
        else:
            m = (gw * x).mean(-1, keepdim=True)
        return r * gw - x * r.pow(3) * m, (g * x * r).reshape(-1, x.shape[-1]).sum(0)

    return _function(f"RMSNorm_{bug or 'right'}", forward, backward).apply


def rmsnorm_inputs(b: int, n: int, dtype, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(b, n, generator=g, dtype=F64).to(dtype).requires_grad_()
    w = (1 + 0.1 * torch.randn(n, generator=g, dtype=F64)).to(dtype).requires_grad_()
    return x, w


# ------------------------------------------------------------------ the truth, from the forward


def true_jacobian_entry(forward, args, j: int, out_index, in_index) -> float:
    """``∂y[out_index] / ∂args[j][in_index]`` from the forward formulas alone (forward mode on
    float64 copies), never from a backward under test."""
    a64 = [a.detach().double() if a.is_floating_point() else a for a in args]
    u = torch.zeros_like(a64[j])
    u[in_index] = 1

    def f(t):
        b = list(a64)
        b[j] = t
        return forward(*b)

    _, t = torch.func.jvp(f, (a64[j],), (u,))
    return float(t[out_index])
