"""Entries the steps of :mod:`.fd_error` resolve only loosely: go on halving while it pays.

The steps of :mod:`.fd_error` span the scales of ``x`` (``max(1, |x|)`` down to ``min(1,
|x|)``, times ``eps ** (1/5)``), not those of ``f``.  A function that varies on a finer scale
than ``|x|`` without a singularity there (``sin(1/t)`` at ``t = 1e-3`` varies on ``t² =
1e-6``) converges only at the table's last steps, and its best estimate kept an error of 8e-3
relative: -562055 for -562379 (issue 44's blind edge case; since then returned with the "fewer
than four significant digits" warning of ``jacobian(method="finite-difference")``).  The
central differences at finer steps do converge: at ``h = 1e-10`` they agree to 1e-11.

**Invariant.**  An entry whose estimate is loose (estimated error above ``LOOSE · (1 + |J|)``,
:data:`LOOSE`) while ``f`` is finite at every step is estimated again on
windows of finer steps, each ``W = MIN_STEPS + EXTRA`` (8) halvings long, overlapping the
previous one by three, down to the precision floor of :mod:`.fd_edge`, at most
:data:`WINDOWS` windows; a window's estimate replaces the entry's only where its own error
estimate is smaller (so no entry gets a worse bound than the table gave), and the search stops
for an entry once it is no longer loose.  The same table (:func:`.fd_error._table`) judges
every window, with its rounding bounds and self-checks.

Only for ``jacobian(method="finite-difference")`` (``crossings=True`` in :mod:`.fd_error`), not
for the checkers' references, for the reason :mod:`.fd_edge` gives: a reference resolved past
the scales of ``x`` can call a float32 backward wrong for a rounding the probe's tolerance does
not allow for.  This module does not import :mod:`.fd_error` (which calls it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

from .fd_edge import EXTRA, floor_steps
from .fd_steps import MIN_STEPS

__all__ = ["LOOSE", "OVERLAP", "WINDOWS", "past_loose"]

# An entry whose estimated error exceeds this (relative, plus the same absolute for entries
# near 0), or fd_tolerance of a lower precision, is returned with a RuntimeWarning: fewer than
# four significant digits (sin(1/t) at t = 1e-3: 8e-3).  Ten times tighter than gradcheck's
# default rtol (1e-3), and above what a pole 1e-4 away (2.6e-6) or x = 1e8 (9e-6) leave.
LOOSE = 1e-4

WINDOWS = 3  # windows of finer steps tried per loose entry at most
OVERLAP = 3  # steps a window shares with the one before it (the table's last three first)


def past_loose(first: tuple, rows: list, evaluate: Callable, f0: Sequence[torch.Tensor],
               h0: torch.Tensor, xscale: torch.Tensor, rounding: float, analyse: Callable,
               loose: float) -> tuple:
    """Re-estimate, on windows of finer steps, the entries that ``first`` resolved loosely.

    Arguments as :func:`gradarg.core.fd_edge.past_nonfinite`'s (``first``: the table's
    ``(value, error, kink, still, alone)``; ``rows``: its evaluations at ``h0 / 2**k``;
    ``evaluate(h, cols)``; ``rounding``: ``C·eps``; ``analyse(rows, evaluate, h0, xscale)``);
    ``loose``: the relative error above which an entry is taken up.  Returns ``first``'s
    lists with the improved entries replaced (the tensors of ``first`` are not modified).
    """
    n, K = h0.shape[0], len(rows)
    if n == 0 or K < OVERLAP:
        return first
    value, error = first[0], first[1]
    redo = []
    cols_mask = torch.zeros(n, dtype=torch.bool)
    for i, y in enumerate(f0):
        v, e = value[i], error[i]
        vreal = v.abs()
        ereal = e.real if e.is_complex() else e
        r = (torch.isfinite(y).unsqueeze(0) & torch.isfinite(ereal) & torch.isfinite(vreal)
             & (ereal > loose * (1 + vreal)))
        redo.append(r)
        cols_mask |= r.reshape(n, -1).any(1)
    if not bool(cols_mask.any()):
        return first
    cols = cols_mask.nonzero().reshape(-1)
    h0_cols, xscale_cols = h0.reshape(-1)[cols], xscale.reshape(-1)[cols]
    h0c = h0_cols.double()
    floor = floor_steps(xscale_cols, rounding)
    width = MIN_STEPS + EXTRA
    store: dict[int, tuple] = {k: _take(rows[k], cols) for k in range(K)}
    out = tuple([t.clone() for t in field] for field in first)
    start = K - OVERLAP
    for _ in range(WINDOWS):
        # columns still holding a loose entry, whose window stays above the precision floor
        open_ = torch.zeros(cols.numel(), dtype=torch.bool)
        for i in range(len(f0)):
            open_ |= redo[i][cols].reshape(cols.numel(), -1).any(1)
        open_ &= h0c / 2.0 ** (start + width - 1) >= floor
        if not bool(open_.any()):
            break
        pos = open_.nonzero().reshape(-1)  # positions in cols
        sub = cols[pos]
        for k in range(start, start + width):
            if k not in store:  # every column of cols at a new step (one batch)
                store[k] = evaluate((h0_cols / 2.0 ** k).to(h0.dtype), cols)
        window = [_take(store[k], pos) for k in range(start, start + width)]
        h_sub = (h0_cols[pos] / 2.0 ** start).to(h0.dtype)
        again = analyse(window, lambda h, sub=sub: evaluate(h, sub), h_sub, xscale_cols[pos])
        for i in range(len(f0)):
            cur_e = out[1][i][sub]
            new_e = again[1][i].to(cur_e.dtype)
            cur_r = cur_e.real if cur_e.is_complex() else cur_e
            new_r = new_e.real if new_e.is_complex() else new_e
            take = redo[i][sub] & torch.isfinite(new_r) & (new_r < cur_r)
            for f, field in enumerate(out):
                cur = field[i][sub]
                field[i][sub] = torch.where(take, again[f][i].to(cur.dtype), cur)
            v = out[0][i][sub].abs()
            e = out[1][i][sub]
            e = e.real if e.is_complex() else e
            redo[i][sub] = redo[i][sub] & (e > loose * (1 + v))
        start += width - OVERLAP
    return out


def _take(row: Any, at: torch.Tensor) -> tuple:
    """The columns ``at`` of one evaluation ``(plus, minus, h_plus, h_minus)``."""
    plus, minus, hp, hm = row
    return (tuple(p[at] for p in plus), tuple(m[at] for m in minus),
            hp.reshape(-1)[at], hm.reshape(-1)[at])
