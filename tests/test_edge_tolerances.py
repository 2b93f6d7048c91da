"""Errors planted just below and just above the tolerances issue 44 touched ("a tolerance
nobody tests"): below must agree, above must be found.

- ``compare_vjp`` against finite differences: element ``j`` of ``vᵀJ`` may be off by
  ``atol_j + rtol·|ref_j|`` with ``atol_j = 2·err_j + backward_rtol·(|v|ᵀ|J|)_j``, its own;
- the rounding a low-precision backward is allowed where the same backward in float64 is
  right: ``C_PRECISION · eps(dtype) · |y|`` (``check_backward``, per row) and
  ``C_PRECISION · eps(dtype) · |v|ᵀ|y|`` (``compare_vjp``).

The tolerances are computed here by hand from those formulas, for functions whose
finite-difference error is far below them (linear maps; ``tanh`` at -10 in float64).
"""

from __future__ import annotations

import pytest
import torch

import gradarg

C_PRECISION = 16.0  # the documented constant (gradarg.check.tolerance.C_PRECISION)
A = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64)


def linear(delta: float):
    """``y = A x`` with a backward off by ``delta`` in element 1."""

    class Lin(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return A.to(x.dtype) @ x

        @staticmethod
        def backward(ctx, go):
            g = A.to(go.dtype).T @ go
            return g + torch.tensor([0.0, delta], dtype=go.dtype)

    return Lin.apply


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("k", [0.5, 2.0])
def test_compare_vjp_element_tolerance(dtype, k):
    x = torch.tensor([0.3, -0.7], dtype=dtype)
    v = torch.ones(2, dtype=dtype)
    # element 1: vᵀJ = 2 + 4 = 6, |v|ᵀ|J| = 6: allowance rtol·(6 + 6), err_1 negligible
    rtol = gradarg.backward_rtol(dtype)
    r = gradarg.compare_vjp(linear(k * rtol * 12), x, v)
    assert r.status == ("agree" if k < 1 else "DISAGREE"), str(r)


def tanh_off_in(dtype_off: torch.dtype, delta: float):
    """A right ``tanh`` backward plus ``delta`` only when run in ``dtype_off``."""

    class Tanh(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = torch.tanh(x)
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            out = g * (1 - y * y)
            return out + delta if y.dtype == dtype_off else out

    return Tanh.apply


@pytest.mark.parametrize("k", [0.5, 2.0])
def test_float32_rounding_allowance_is_capped(k):
    # at -10 float32's y is -1: cap = 16·eps32·|y|; the float64 run is right, the float32
    # one off by k·cap (a bug in float32 only): within the cap it is rounding, beyond wrong
    cap = C_PRECISION * torch.finfo(torch.float32).eps * 1.0
    fn = tanh_off_in(torch.float32, k * cap)
    x = torch.tensor([-10.0])
    r = gradarg.check_backward(fn, x.clone().requires_grad_(), reference="finite-difference")
    assert r.status == ("agree" if k < 1 else "wrong"), r.summary
    if k < 1:
        assert "within float32 rounding" in r.summary
    c = gradarg.compare_vjp(fn, x, torch.ones(1))
    assert c.status == ("agree" if k < 1 else "DISAGREE"), str(c)


def test_a_bug_in_both_dtypes_is_never_rounding():
    # the same offset in float64 too: the float64 run disagrees with the reference, so even
    # below the cap it is wrong
    cap = C_PRECISION * torch.finfo(torch.float32).eps

    class Both(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = torch.tanh(x)
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * (1 - y * y) + 0.5 * cap

    x = torch.tensor([-10.0])
    r = gradarg.check_backward(Both.apply, x.clone().requires_grad_(),
                               reference="finite-difference")
    assert r.status == "wrong", r.summary
    c = gradarg.compare_vjp(Both.apply, x, torch.ones(1))
    assert c.status == "DISAGREE", str(c)
