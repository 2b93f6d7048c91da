"""Freivalds' random check of a compressed derivative: where it fails, and what it cannot see.

For ``k`` random vectors ``r`` a product through ``fn``'s graph (``got``: ``rᵀJ`` or ``H r``)
is compared with ``r`` contracted with the returned entries (``want``), entry by entry,
against ``scale``, the same contraction with absolute values (R. Freivalds, "Probabilistic
machines can use less running time", IFIP Congress 1977).  A difference above
``sqrt(eps) × (scale + |got|)`` is a failure: the pattern misses non-zeros.  A difference
below that but far above rounding (``ROUNDING × eps × (scale + |got|)``: a sum of ``n``
products carries at most about ``n × eps`` relative error, Higham, *Accuracy and Stability of
Numerical Algorithms*, 2nd ed., §3.1) is not proof either way: a missing entry that small
beside large ones, or a backward pass that rounds more than the product of its factors.  That
is said in a warning instead of passing in silence.

Imports only torch.
"""

from __future__ import annotations

import warnings

import torch

__all__ = ["ROUNDING", "failed_entry"]

# a difference up to this many eps (relative to the contraction's scale) is rounding
ROUNDING = 256


def failed_entry(got: torch.Tensor, want: torch.Tensor, scale: torch.Tensor,
                 dtype: torch.dtype, what: str) -> tuple[int, int, float, float] | None:
    """The first ``(check, element, difference, allowed)`` of ``k × n`` products that fails
    the ``sqrt(eps)`` tolerance of ``dtype``, or ``None``; when none fails but a difference
    is more than :data:`ROUNDING` eps of its scale, a ``UserWarning`` says how small the entries
    the check could not see may be (``what``: "Jacobian" or "Hessian")."""
    info = torch.finfo(dtype)
    err = (got - want).abs()
    size = scale + got.abs()
    bound = info.eps ** 0.5 * size + info.tiny
    bad = err > bound
    if bool(bad.any()):
        t, j = (int(i) for i in bad.nonzero()[0])
        return t, j, float(err[t, j]), float(bound[t, j])
    relative = err / (size + info.tiny)
    worst = float(relative.max()) if relative.numel() else 0.0
    if worst > ROUNDING * info.eps:
        t, j = (int(i) for i in (relative == relative.max()).nonzero()[0])
        warnings.warn(
            f"the {what}'s random check passed within its tolerance (sqrt(eps) = "
            f"{info.eps ** 0.5:.1e} of the scale), but at element {j} a difference of "
            f"{worst:.1e} of the scale remains, more than rounding ({ROUNDING} eps = "
            f"{ROUNDING * info.eps:.1e}): the pattern may miss entries that small beside the "
            f"large ones, which this check cannot tell from rounding", UserWarning, stacklevel=4)
    return None
