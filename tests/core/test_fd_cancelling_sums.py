"""Finite differences of an output that is a cancelling sum: an open defect, kept visible.

Found by ``benchmarks/jacobian.py --dtype float64`` (matmul 256 -> 256 left 34 of 65,536
entries NaN): ``jacobian(method="finite-difference")`` judges each output's rounding by
``eps * |f_i|`` (``gradarg.core.fd_error``'s noise model).  When ``f_i`` is a sum whose terms
cancel, ``|f_i|`` is far below the terms, so the rounding of ``f_i(x ± h)`` (about
``eps * sum_j |W_ij x_j|``, the dot product's error bound: Higham, *Accuracy and Stability of
Numerical Algorithms*, 2nd ed., section 3.1) is underestimated, the finer steps' estimates
"disagree beyond their bound", and exact entries of a linear map come back NaN with a warning.
Nothing is wrong without a word (NaN and a warning), but a linear map should be resolved.

The invariant: for ``W @ x`` in float64, every entry is resolved and within the documented
tolerance of ``W``.  Marked ``xfail(strict=True)`` where the row cancels, so a fix turns it
into a failure to be unmarked; the control rows (no cancellation) must pass today.
"""

from __future__ import annotations

import warnings

import pytest
import torch

import gradarg
from gradarg import fd_tolerance


def _cancelling(n: int, target: float, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
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


@pytest.mark.xfail(strict=True, reason="fd's rounding bound uses |f_i|, not the size of the "
                   "terms that cancel in f_i (open; see the module docstring)")
@pytest.mark.parametrize("target", [1e-3, 1e-6])
@pytest.mark.parametrize("seed", [0, 1])
def test_a_linear_map_whose_row_cancels_is_resolved(target: float, seed: int) -> None:
    w, x = _cancelling(256, target, seed)
    assert float((w[0] * x).abs().sum()) > 1e4 * target  # the row does cancel
    _resolved(w, x)
