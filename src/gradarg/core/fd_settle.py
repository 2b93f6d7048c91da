"""Entries of a finite-difference Jacobian whose output never moved: zero, or unresolved?

Central differences (:mod:`.fd_error`) leave an entry at exactly 0 when ``f_i`` took the same
value at every step along column ``j``.  That says ``|J_ij| <= C * eps * |f_i| / h_0`` (the
rounding of ``f_i`` over the largest step), a bound from the entry's own output and its own
step, which is resolution only against derivatives far larger (``UNRESOLVED``, 1%): its own
one-sided slopes (checked by :mod:`.fd_error`: an even function at its centre, ``cos`` at 0),
or the resolved derivatives of its row (the same output along every other column) or of its
column (every output along the same column).  Mixed magnitudes break it: ``3 * x.sum()`` at
``x = [0, 1e300]`` is 3e300 for every step along ``x[0]``, whose derivative 3 lies far below
the bound 1e289, and it was returned as 0 with no warning (issue 44).  Such an entry gets an
infinite error: unresolved, so ``jacobian(method="finite-difference")`` returns NaN there
with a warning and the checkers say they could not check it, unless the value under test
lies outside the bound, which is kept (``Estimate.bound``): the derivative is not known
there, but it is no larger than that (sigmoid at 30: 9.4e-14, where a backward that returns
1 is wrong whatever the differences resolve).

Only where nothing near the entry moved at all (no resolved derivative in its row or column)
is the bound judged against ``|f| / max(1, |x|)``, as for a function flat between its jumps
(``floor``); there ``3e300 + x`` alone cannot be told from a constant.

:func:`settle` runs over every column of the Jacobian at once (all inputs), so that rows are
whole; it does not import :mod:`.fd_error` (which calls it).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch

UNRESOLVED = 0.01  # an error bound above 1% of the derivatives near it: not resolved


def settle(ests: Sequence[Any]) -> None:
    """Mark unresolved (infinite error, in place) the entries whose output never moved and
    whose bound is not small against the derivatives near them.

    ``ests`` are estimates of the same outputs along different columns (input elements or
    directions, of any inputs).  An entry of ``still`` is zero within its bound
    when that bound is at most ``UNRESOLVED`` (1%) of the largest resolved derivative of its
    row (the same output element, over every column of ``ests``) or of its column (every
    output along the same column); when neither holds a nonzero resolved derivative, when the
    bound is that small against ``|f| / max(1, |x|)`` (``alone``: a function flat between its
    jumps, ``floor``).  Else the central differences could not see the derivative: ``3·x[0]
    + x[1]`` at ``x = [0, 1e300]`` rounds to the same value at every step along ``x[0]``.
    """
    ests = [e for e in ests if e.still is not None]
    if not ests:
        return
    n_out = len(ests[0].value)

    def moving(e: Any, k: int) -> torch.Tensor:
        ok = torch.isfinite(e.error[k]) & ~e.still[k] & torch.isfinite(e.value[k])
        return torch.where(ok, e.value[k].abs(), torch.zeros_like(e.error[k]))

    rows = []
    for k in range(n_out):
        r = None
        for e in ests:
            m = moving(e, k)
            if m.shape[0]:
                mk = m.amax(0)
                r = mk if r is None else torch.maximum(r, mk.to(r.dtype))
        rows.append(r)
    for e in ests:
        n = e.value[0].shape[0] if n_out else 0
        col = torch.zeros(n, dtype=torch.float64)
        for k in range(n_out):
            m = moving(e, k).reshape(n, -1)
            if m.shape[1]:
                col = torch.maximum(col, m.amax(1).double())
        bound = list(e.bound) if e.bound is not None else [
            torch.zeros_like(err) for err in e.error]
        for k in range(n_out):
            still = e.still[k]
            if not bool(still.any()):
                continue
            err = e.error[k]
            shape = (n,) + (1,) * (err.dim() - 1)
            near = col.reshape(shape).to(err.dtype)
            row = rows[k]  # None only when no input element has a column (nothing to compare)
            if row is not None:
                near = torch.maximum(near, row.unsqueeze(0).to(err.dtype))
            ok = torch.where(near > 0, err <= UNRESOLVED * near, e.alone[k])
            marked = still & ~ok
            e.error[k] = torch.where(marked, torch.full_like(err, math.inf), err)
            bound[k] = torch.where(marked, err, bound[k])
        e.still = [torch.zeros_like(s) for s in e.still]  # settled: not settled again
        e.bound = bound
