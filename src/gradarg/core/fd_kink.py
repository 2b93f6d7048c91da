"""Is a kink that every finite-difference step crosses at ``x``, or beside it?

:mod:`.fd_error` sees a kink (``abs``, ``relu``, ``clamp`` at the breakpoint) as one-sided
differences ``(f(x+h) - f(x)) / h`` and ``(f(x) - f(x-h)) / h`` whose gap does not shrink with
``h``, and returns the midpoint of the two one-sided derivatives, a valid subgradient **at the
kink**.  A kink a few spacings of ``x`` away looks the same at every step that spans it:
``clamp(x, -1, 1)`` at ``x = 1 + 1e-15`` (five spacings of float64 above 1), where the steps
``h >= 1e-4`` give the one-sided slopes 0 and ``1 - 1e-15 / h`` and the midpoint 0.5, but the
derivative is 0 (issue 44; the long hypothesis profile found it).  The same at ``abs`` with
``x = -1e-300``: even about ``x`` at every step, so its output never moves.

The test: ``f`` one spacing of ``x`` away on each side (``torch.nextafter``).  At a kink at
``x`` the one-sided slopes over that spacing are those of the steps, right and left; beside
``x`` both sides are on one branch.  A kink is at ``x`` only when both slopes over one spacing
lie within a quarter of the gap of the slopes of the steps; else the entry is unresolved
(NaN and a warning from ``jacobian``, "could not check" from the checkers).  Where ``f``'s
rounding at one spacing of ``x`` hides the slopes (``abs(t) + 1`` at 0, where
``abs(t - 1e-300) + 1`` takes the same value at every float near 0) that is unresolved too:
the values of ``f`` cannot tell a kink at ``x`` from one beside it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch

QUARTER = 0.25  # one-sided slopes over one spacing within this share of the gap: at x


def spacing(a: torch.Tensor) -> torch.Tensor:
    """The distance from ``a >= 0`` to the next larger float of float64, per element."""
    a = a.double()
    return torch.nextafter(a, torch.full_like(a, math.inf)) - a


def kink_at_x(probe: Any, i: int, y: torch.Tensor,
              sides: Sequence[tuple[torch.Tensor, torch.Tensor]], at: torch.Tensor) -> torch.Tensor:
    """Where the kink is at ``x``: a bool tensor of shape ``(N, *y.shape)``.

    ``probe``: ``(plus, minus, h_plus, h_minus)``, ``f`` one spacing of ``x`` away along
    every column (outputs by index ``i``); ``sides[k]``: the right and left one-sided
    slopes at step ``k``, shape ``(N, *y.shape)``; ``at``: the step whose slopes the kink
    estimate used, shape ``(1, N, *y.shape)``, clamped to the steps.
    """
    plus, minus, hp, hm = probe
    shape = (hp.shape[0],) + (1,) * y.dim()
    real = plus[i].real.dtype
    right = (plus[i] - y) / hp.reshape(shape).to(real)
    left = (y - minus[i]) / hm.reshape(shape).to(real)
    at = at.clamp(max=len(sides) - 1)
    rh = torch.stack([s[0] for s in sides]).gather(0, at).squeeze(0)
    lh = torch.stack([s[1] for s in sides]).gather(0, at).squeeze(0)
    tol = QUARTER * (rh - lh).abs()
    return ((right - rh).abs() <= tol) & ((left - lh).abs() <= tol)
