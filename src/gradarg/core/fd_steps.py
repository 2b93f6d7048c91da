"""The steps of the finite differences of :mod:`.fd_error`: how many halvings, from which
first step, so that the geometric sequence spans the scales on which ``f`` may vary near an
element ``x_j`` (``max(1, |x_j|)`` down to ``min(1, |x_j|)``; the module docstring of
:mod:`.fd_error` says why)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch

MAX_STEPS = 24
MIN_STEPS = 5

__all__ = ["COARSE", "MAX_STEPS", "MIN_STEPS", "coarse_directions", "n_steps", "steps_for"]


def n_steps(ratio: torch.Tensor) -> int:
    """Steps from ``4 r s_hi`` down to ``r s_lo / 4``: enough halvings to span both scales,
    between ``MIN_STEPS`` and ``MAX_STEPS``.

    ``ratio`` is ``s_hi / s_lo`` per column; it may be infinite (``1 / 5e-324``: a subnormal
    element) or beyond ``2**MAX_STEPS`` (``1 / 1e-308``): those columns take ``MAX_STEPS``
    (the count is computed from ``log2(ratio)``, never from ``16 * ratio``, which overflows).
    NaN ratios (a NaN element, whose entries are unresolved anyway) are ignored.
    """
    r = ratio.detach().double().reshape(-1)
    r = r[~torch.isnan(r)]
    if not r.numel():
        return MIN_STEPS
    top = float(r.max())
    if not top < 2.0 ** MAX_STEPS:  # inf, or more halvings than the cap anyway
        return MAX_STEPS
    return int(min(MAX_STEPS, max(MIN_STEPS, 5 + math.ceil(math.log2(max(top, 1.0))))))


def _spans(a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The scales ``(s_hi, s_lo)`` on which ``f`` may vary near elements of size ``a``:
    ``max(1, |x|)`` and ``min(1, |x|)`` (``s_hi`` where ``x`` is 0)."""
    s_hi = a.clamp_min(1.0)
    return s_hi, torch.where(a > 0, a.clamp_max(1.0), s_hi)


def steps_for(x: torch.Tensor) -> int:
    """The number of steps :func:`.fd_error.partials` takes for the elements of ``x``."""
    s_hi, s_lo = _spans(x.abs().reshape(-1))
    return n_steps(s_hi / s_lo)


def _root(eps: float) -> float:
    return eps ** 0.2  # the step that balances h**4 truncation against eps/h rounding


COARSE = 0.01  # a component moved by more than this share of its scale at the finest step


def coarse_directions(xs: Sequence[torch.Tensor], directions: Sequence[Sequence[Any]],
                      h0: torch.Tensor, steps: int) -> torch.Tensor:
    """Which directions the steps ``h0 / 2**k`` (``k < steps``) never resolve: one whose
    components differ so much in scale that even the finest step moves some element ``x_i``
    by more than :data:`COARSE` of ``max(1, |x_i|)`` (``u = [1, 1, 1]`` at ``x = [0, 0,
    1e300]``: the steps start at 1e295 and stop near 1e288, where ``atan`` of the small
    elements is flat: their derivative is read as 0, confidently).  A bool per direction."""
    out = torch.zeros(len(directions), dtype=torch.bool)
    for c, us in enumerate(directions):
        finest = float(h0[c]) / 2 ** (steps - 1)
        for x, u in zip(xs, us, strict=True):
            if u is not None and u.numel() and bool(
                    (finest * u.abs().double() > COARSE * x.abs().double().clamp_min(1.0)).any()):
                out[c] = True
    return out
