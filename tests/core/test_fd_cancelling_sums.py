"""Finite differences of an output that is a cancelling sum.

Found by ``benchmarks/jacobian.py --dtype float64`` (matmul 256 -> 256 left 34 of 65,536
entries NaN): ``jacobian(method="finite-difference")`` judged each output's rounding by
``eps * |f_i|``.  When ``f_i`` is a sum whose terms cancel, ``|f_i|`` is far below the terms,
so the rounding of ``f_i(x ± h)`` (about ``eps * sum_j |W_ij x_j|``, the dot product's error
bound: Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., section 3.1) was
underestimated, the finer steps' estimates "disagreed beyond their bound", and exact entries
of a linear map came back NaN with a warning.  ``gradarg.core.fd_terms.row_terms`` now puts
the size of the terms into the rounding bound.

The invariant: for ``W @ x`` in float64, every entry is resolved and within the documented
tolerance of ``W``, whatever the cancellation (hypothesis over sizes, seeds and how far a row
cancels), and the terms' size is what the bound reads (checked against the sum itself).
"""

from __future__ import annotations

import math
import warnings

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import gradarg
from gradarg import fd_tolerance
from gradarg.core.fd_terms import row_terms


def _cancelling(n: int, target: float | None, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``W`` (8 x n) and ``x`` (n) in float64, row 0 of ``W @ x`` equal to ``target`` while
    its terms ``W[0, j] x[j]`` are of order 1 (``target=None``: left as drawn)."""
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(8, n, generator=g, dtype=torch.float64)
    x = torch.randn(n, generator=g, dtype=torch.float64)
    if target is not None:
        w[0, 0] -= (w[0] @ x - target) / x[0]
    return w, x


def _resolved(w: torch.Tensor, x: torch.Tensor) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the unresolved entries' warning
        jac = gradarg.jacobian(lambda t: w @ t, x, method="finite-difference")
    assert not bool(jac.isnan().any()), f"{int(jac.isnan().sum())} entries left NaN"
    tol = fd_tolerance(torch.float64)
    assert torch.allclose(jac, w, rtol=tol, atol=tol * float(w.abs().max()))


@pytest.mark.parametrize("n", [64, 256])
@pytest.mark.parametrize("seed", [0, 1])
def test_a_linear_map_without_cancellation_is_resolved(n: int, seed: int) -> None:
    w, x = _cancelling(n, None, seed)
    w[0] = w[0].abs()
    x = x.abs()  # every term of every row 0 positive: no cancellation there
    _resolved(w, x)


@pytest.mark.parametrize("target", [1e-3, 1e-6, 0.0])
@pytest.mark.parametrize("seed", [0, 1])
def test_a_linear_map_whose_row_cancels_is_resolved(target: float, seed: int) -> None:
    w, x = _cancelling(256, target, seed)
    assert float((w[0] * x).abs().sum()) > 1e4 * abs(float(w[0] @ x))  # the row does cancel
    _resolved(w, x)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(8, 160), exponent=st.integers(1, 12), seed=st.integers(0, 2**16),
       scale=st.sampled_from([1e-3, 1.0, 1e3]))
def test_cancelling_rows_of_any_size_are_resolved(n: int, exponent: int, seed: int,
                                                  scale: float) -> None:
    w, x = _cancelling(n, 10.0 ** -exponent, seed)
    _resolved(w, x * scale)


def test_row_terms_is_the_size_of_the_terms() -> None:
    """The bound's size of an output against the sum of its terms' magnitudes, computed here
    from ``W`` and ``x``: the central differences of a linear map are ``W`` up to rounding."""
    w, x = _cancelling(64, 1e-6, 3)
    steps = torch.tensor([1e-2, 5e-3, 2.5e-3], dtype=torch.float64)
    d = torch.stack([(w * h).T / h for h in steps])  # (K, n, m): column j of W at each step
    got = row_terms(d, x.abs().reshape(-1, 1))
    want = (w.abs() * x.abs()).sum(1)
    assert torch.allclose(got, want, rtol=1e-12)
    assert float(got[0]) > 1e5 * abs(float(w[0] @ x))
    # a step where f was not finite counts as 0, and the median of the three middle steps
    # keeps the other two's value; an outlier step (truncation, rounding) is outvoted too
    d[1, 0, 0] = math.inf
    d[0, 1, 0] = 1e6
    again = row_terms(d, x.abs().reshape(-1, 1))
    assert math.isfinite(float(again[0]))
    assert torch.allclose(again, want, rtol=1e-12)


@pytest.mark.parametrize("off", [1e-4, 1e-6])
def test_a_wrong_backward_of_a_cancelling_row_is_still_found(off: float) -> None:
    """The wider rounding bound of a cancelling row hides no error above it: a backward whose
    one entry of that row is ``off`` away from ``W``'s is called wrong, the right one agrees."""
    w, x = _cancelling(128, 1e-6, 5)
    bad = w.clone()
    bad[0, 7] += off

    class Product(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t: torch.Tensor, back: torch.Tensor) -> torch.Tensor:
            ctx.back = back
            return w @ t

        @staticmethod
        def backward(ctx, g: torch.Tensor) -> tuple[torch.Tensor, None]:
            return g @ ctx.back, None

    t = x.clone().requires_grad_(True)
    assert gradarg.check_backward(lambda u: Product.apply(u, w), t).status == "agree"
    r = gradarg.check_backward(lambda u: Product.apply(u, bad), t)
    assert r.status == "wrong", r.summary
