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


def scaled_sin(off: float):
    """``y = [1e6·x0, sin x1]``, the backward of the second entry off by ``off``."""

    class S(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return torch.stack([1e6 * x[0], torch.sin(x[1])])

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return torch.stack([1e6 * g[0], g[1] * torch.cos(x[1]) + g[1] * off])

    return S.apply


@pytest.mark.parametrize("k", [0.3, 3.0])
def test_check_backward_entry_tolerance_is_its_row_and_columns(k):
    # entry (1, 1) = cos(0.7): tolerance 2·e + rtol·(|cos| + max of its row and column) =
    # rtol·2·cos(0.7) (e, the reference's error, far below); the 1e6 of entry (0, 0) is in
    # neither (with the block's largest entry it allowed 1e-4: the fuzz report's case)
    x = torch.tensor([0.3, 0.7], dtype=torch.float64)
    allowed = gradarg.backward_rtol(torch.float64) * 2 * float(torch.cos(x[1]))
    r = gradarg.check_backward(scaled_sin(k * allowed), x.clone().requires_grad_())
    assert r.status == ("agree" if k < 1 else "wrong"), r.summary
    # compare_vjp with v = [0, 1]: element 1 is cos(0.7) alone, its atol rtol·cos(0.7) plus
    # the reference's error (with v = [1, 1] the entry ∂y0/∂x1 joins it: 0 within the
    # bound 3.6e-7 at which a step moves y0 = 3e5, which is all finite differences can say)
    v = torch.tensor([0.0, 1.0], dtype=torch.float64)
    c = gradarg.compare_vjp(scaled_sin(k * allowed), x, v)
    assert c.status == ("agree" if k < 1 else "DISAGREE"), str(c)


@pytest.mark.parametrize(("call", "words"), [
    (lambda: gradarg.fd_step(1.0), ["fd_step", "x", "float"]),
    (lambda: gradarg.fd_step(torch.arange(3)), ["fd_step", "x", "torch.int64"]),
    (lambda: gradarg.fd_tolerance("float64"), ["fd_tolerance", "dtype", "str"]),
    (lambda: gradarg.fd_tolerance(torch.int64), ["fd_tolerance", "dtype", "torch.int64"]),
])
def test_fd_helpers_refuse_wrong_types_by_name(call, words):
    # the fuzz report: AttributeError / torch.finfo's message before
    with pytest.raises(TypeError) as err:
        call()
    assert all(w in str(err.value) for w in words), str(err.value)


def test_compare_vjp_forward_reference_without_jvp_is_named():
    class NoJvp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return 2 * x

        @staticmethod
        def backward(ctx, g):
            return 2 * g

    with pytest.raises(ValueError, match=r"reference='forward': fn does not support forward"):
        gradarg.compare_vjp(NoJvp.apply, torch.ones(3, dtype=torch.float64),
                            torch.ones(3, dtype=torch.float64), reference="forward")
