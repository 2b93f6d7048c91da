"""How far a correct backward may be from the exact vector-Jacobian product, per dtype."""

from __future__ import annotations

import torch

__all__ = ["SAFETY", "backward_rtol", "entry_tolerance"]

# Relative to |v|ᵀ|J| (the sum of the sizes of the terms of vᵀJ, so cancellation is covered).
_RTOL = {
    # ~4.5e5 eps of float64: room for long chains and reductions, yet a backward that rounds
    # through float32 (relative error up to 6e-8, half float32's eps) is caught.
    torch.float64: 1e-10,
    # ~84 eps of float32: sqrt(n)·eps, the typical rounding of a length-n dot product
    # (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., section 3.1 and
    # Theorem 3.8's probabilistic reading), for n up to about 7,000; equal to
    # torch.testing.assert_close's float32 atol.
    torch.float32: 1e-5,
    # torch.testing.assert_close's defaults for the half-precision types (rtol).
    torch.float16: 1e-3,
    torch.bfloat16: 1.6e-2,
}


def backward_rtol(dtype: torch.dtype) -> float:
    """Relative rounding a correct ``backward`` may show in ``dtype``.

    A backward computed in ``dtype`` rounds; :func:`gradarg.compare_vjp` (finite-difference
    reference) and :func:`gradarg.check_backward` allow ``backward_rtol(dtype) * (|v|ᵀ|J|)``
    on top of the reference's own estimated error.  Values: float64 ``1e-10`` (far above
    float64 rounding, far below float32's, so a backward that silently computes in float32 is
    caught); float32 ``1e-5`` (``sqrt(n)·eps`` for dot products of length up to about 7,000,
    Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., section 3.1; the
    ``atol`` of ``torch.testing.assert_close`` for float32); float16 ``1e-3`` and bfloat16
    ``1.6e-2`` (``torch.testing.assert_close``'s ``rtol``).  Complex dtypes use their real
    dtype's value.

    Parameters
    ----------
    dtype : torch.dtype
        Floating or complex dtype of the backward's result.

    Raises
    ------
    TypeError
        ``dtype`` is not a floating or complex dtype.

    Examples
    --------
    >>> import torch
    >>> backward_rtol(torch.float64), backward_rtol(torch.complex64)
    (1e-10, 1e-05)
    """
    if not (dtype.is_floating_point or dtype.is_complex):
        raise TypeError(f"dtype must be floating or complex, got {dtype}")
    real = torch.empty((), dtype=dtype).real.dtype
    return _RTOL[real]


SAFETY = 2.0  # margin on the finite-difference error estimate (itself an overestimate)


def entry_tolerance(reference: torch.Tensor, error: torch.Tensor | float,
                    rtol: float) -> torch.Tensor:
    """Per entry of a Jacobian block, how far the backward's entry may be from the reference's:
    ``SAFETY · e + rtol · (|reference| + max |reference|)``, with ``e`` the reference's
    estimated error (zero for forward mode and an intended backward).  The ``max`` term lets
    entries near zero differ by the rounding of the block's largest entries."""
    scale = float(reference.abs().max()) if reference.numel() else 0.0
    return SAFETY * error + rtol * (reference.abs() + scale) + 1e-300

