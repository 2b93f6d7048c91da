"""Steps that cross a singularity or a domain edge: go on halving past them.

The steps of :mod:`.fd_error` span the scales of ``x`` (``max(1, |x|)`` down to ``min(1,
|x|)``, times ``eps ** (1/5)``), not those of ``f``: a function with a singularity or a domain
edge at a distance ``d`` from ``x`` far below ``|x|`` (``log1p`` at ``x = -0.999``, 0.001
from -1; ``log(x - a)``, ``sqrt(x - a)`` with ``a`` just below ``x``; ``acos`` / ``asin``
just inside ±1; ``exp`` just below its overflow) is not finite at the steps larger than
``d``.  There the Richardson table has too few finite central differences to extrapolate,
and the entry was left unresolved: a backward off by a factor 2 was "could not check"
instead of WRONG (issue 44, the long hypothesis profile, ``log1p`` at -0.999 in float32).

**Invariant.**  A reference that meets non-finite values at its coarse steps goes on to finer
steps until it has enough finite ones to settle, or the precision floor; it resolves an entry
whenever a finite neighbourhood of ``x`` at least as wide as its finest usable steps exists,
and a wrong backward is then WRONG, a correct one never is.

How: an entry is taken up again when ``f(x)`` is finite, the table left it unresolved, and at
some step ``h_k`` either ``f(x ± h_k)`` is not finite, or (where the caller asks, below) the
step crosses a pole with finite values: the one-sided differences ``f(x + h) - f(x)`` and ``f(x) - f(x - h)`` have opposite
signs and are both ``CROSS`` (64) times above the rounding of ``f`` (``1 / (x - a)`` with ``x - h
< a < x``).  Its column (input element or direction) is shifted to finer steps: a window of
``W = MIN_STEPS + EXTRA`` (8) consecutive halvings that starts one halving below the last step
at which one of those entries was not finite or crossed, evaluated one halving at a time (a
step that is not finite or crosses moves the start again), so the window is the coarsest run
of ``W`` clean steps.  Its first step lies within a factor 2 of ``d``, where the truncation
error is largest; the three halvings beyond the five of the shortest table give it room to
settle.  The same table (:func:`.fd_error._table`, with its rounding bounds, off-grid
self-check and kink tests) then judges the window, and its estimate replaces the unresolved one
for those entries only: every entry whose table was clean, or that it resolved, keeps what it
had.

The **precision floor**: a window is only tried while its third step (the finest step of the
noise bound of its coarsest estimate) is at least ``FLOOR = C·eps·s / UNRESOLVED`` with ``s =
|x|`` (1 at ``x = 0``; along a direction ``max(1, |x|) / max|u|``): below it the rounding of
``x + h`` alone, ``C·eps·|x|·|f'| / h`` in the noise bound of :mod:`.fd_error`, exceeds 1% of
the derivative, so no estimate there could be resolved.  In float64 that is ``3.6e-13 |x|``,
about 33 halvings below the first step at ``|x| = 1``.  Measured (``tests/check/
test_fd_singular.py``): ``log``, ``log1p``, ``sqrt``, ``acos``, ``asin`` with the edge at a
distance ``d >= 16 · FLOOR`` (with ``s = max(1, |x|)``) are resolved, at 8 · FLOOR some are not.
Where ``f`` is not finite on one side at every step (``sqrt`` exactly at 0, ``acos`` exactly
at 1: a one-sided derivative that is infinite), the search goes to the floor and the entry
stays unresolved, at the cost of one evaluation of that column per halving.

Poles crossed with finite values are stepped past only where the caller asks
(``crossings=True``: ``jacobian(method="finite-difference")``), not in the checkers'
references.  There an oscillation resolved at finer steps (``cos(x³)`` at ``x = -100`` in
float32) lets a random probe ``vᵀJu`` disagree with a float32 backward whose rounding of
``x³`` the probe's tolerance does not allow for, although every entry agrees within that
rounding: a correct backward was called WRONG by its probes (the long profile of
``tests/check/test_fd_reliability.py``), where, with the entry unresolved, it was "could not
check".  Non-finite values are stepped past everywhere.

Sign changes of the one-sided differences are also what an oscillation below the steps shows
(``sin`` at ``10¹⁷``), which no finer step resolves: the search past a crossing met with finite
values only stops ``CROSS_STEPS`` (12) halvings below the table, so a pole is resolved when
``d`` is at least about ``2**-12`` times the table's finest step (``1 / (x - a)``: ``d >= 1e-6
|x|`` at ``|x| = 1``), at a cost of at most 12 + 8 evaluations of an unresolved column.

This module does not import :mod:`.fd_error` (which calls it): the table is passed in.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

from .fd_settle import UNRESOLVED
from .fd_steps import MIN_STEPS

__all__ = ["EXTRA", "floor_steps", "past_nonfinite"]

EXTRA = 3  # halvings added to a shifted window beyond the column's own number of steps
CROSS = 64.0  # one-sided differences this many times f's rounding: a crossing, not noise
CROSS_STEPS = 12  # halvings past the table tried for a pole crossed with finite values


def floor_steps(xscale: torch.Tensor, rounding: float) -> torch.Tensor:
    """The precision floor per column (the module docstring): ``rounding * s / UNRESOLVED``
    with ``s = xscale`` (1 where it is 0), float64, shape ``(N,)``."""
    s = xscale.reshape(-1).double()
    s = torch.where(s > 0, s, torch.ones_like(s))
    return rounding * s / UNRESOLVED


def _nonfinite(row: Sequence[Any], i: int) -> torch.Tensor:
    plus, minus = row[0][i], row[1][i]
    return ~torch.isfinite(plus) | ~torch.isfinite(minus)


def _crossing(row: Sequence[Any], i: int, y: torch.Tensor, rounding: float) -> torch.Tensor:
    """Entries whose one-sided differences at this step have opposite signs, both far above
    the rounding of ``f`` (``CROSS`` times it): ``f(x + h) - f(x)`` and ``f(x) - f(x - h)``
    of a pole crossed with finite values (``1 / (x - a)`` with ``x - h < a < x``)."""
    plus, minus = row[0][i], row[1][i]
    right, left = plus - y, y - minus
    prod = (right * left.conj()).real if right.is_complex() else right * left
    size = torch.maximum(torch.maximum(plus.abs(), minus.abs()), y.abs())
    floor = CROSS * rounding * size
    return (prod < 0) & (right.abs() > floor) & (left.abs() > floor)


def past_nonfinite(first: tuple, rows: list, evaluate: Callable, f0: Sequence[torch.Tensor],
                   h0: torch.Tensor, xscale: torch.Tensor, rounding: float,
                   analyse: Callable, crossings: bool = False) -> tuple:
    """Re-estimate, on finer steps, the entries that ``first`` left unresolved because ``f``
    was not finite at some of its steps, or crossed a pole (the module docstring).

    ``first``: ``(value, error, kink, still, alone)`` of the table over ``rows`` (evaluations
    at the nominal steps ``h0 / 2**k``, ``k < K``; each ``(plus, minus, h_plus, h_minus)``);
    ``evaluate(h, cols)`` evaluates the columns ``cols`` (a long tensor) at steps ``h`` (shape
    ``(len(cols),)``); ``rounding``: ``C·eps``; ``analyse(rows, evaluate, h0, xscale)``: the
    table over other rows and columns; ``crossings``: step past poles crossed with finite
    values too (not for the checkers: the module docstring).  Returns ``first``'s lists, with the re-estimated
    entries replaced (the tensors of ``first`` are not modified).
    """
    error = first[1]
    n, K = h0.shape[0], len(rows)
    redo, anybad = [], torch.zeros(n, dtype=torch.bool)
    nan_col = torch.zeros(n, dtype=torch.bool)  # a redo entry met a non-finite value
    for i, y in enumerate(f0):
        nonfin = torch.zeros((n, *y.shape), dtype=torch.bool)
        cross = torch.zeros((n, *y.shape), dtype=torch.bool)
        for row in rows:
            nonfin |= _nonfinite(row, i)
            if crossings:
                cross |= _crossing(row, i, y, rounding)
        open_ = torch.isfinite(y).unsqueeze(0) & ~torch.isfinite(error[i])
        r = open_ & (nonfin | cross)
        redo.append(r)
        anybad |= r.reshape(n, -1).any(1)
        nan_col |= (open_ & nonfin).reshape(n, -1).any(1)
    if not bool(anybad.any()):
        return first
    cols = anybad.nonzero().reshape(-1)
    nan_col = nan_col[cols]
    width = MIN_STEPS + EXTRA

    def bad_at(row, sel: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Columns ``sel`` (positions in ``cols``) where an entry to redo is not finite, and
        where one crosses a pole."""
        nf = torch.zeros(sel.numel(), dtype=torch.bool)
        cr = torch.zeros(sel.numel(), dtype=torch.bool)
        for i, y in enumerate(f0):
            mine = redo[i][cols[sel]]
            nf |= (_nonfinite(row, i) & mine).reshape(sel.numel(), -1).any(1)
            if crossings:
                cr |= (_crossing(row, i, y, rounding) & mine).reshape(sel.numel(), -1).any(1)
        return nf, cr

    every = torch.arange(cols.numel())
    start = torch.zeros(cols.numel(), dtype=torch.long)
    for k in range(K):
        row = (tuple(p[cols] for p in rows[k][0]), tuple(q[cols] for q in rows[k][1]))
        nf, cr = bad_at(row, every)
        start = torch.where(nf | cr, torch.full_like(start, k + 1), start)
    h0c = h0.reshape(-1)[cols].double()
    floor = floor_steps(xscale.reshape(-1)[cols], rounding)

    def usable(s: torch.Tensor) -> torch.Tensor:
        # a pole crossed with finite values looks like an oscillation below the steps, which
        # no finer step resolves: that search stops after CROSS_STEPS more halvings
        return (h0c / 2.0 ** (s + 2) >= floor) & (nan_col | (s <= K + CROSS_STEPS))

    store: dict[int, tuple[torch.Tensor, tuple]] = {}
    t = K
    while True:
        active = usable(start) & (start + width - 1 >= t)
        if not bool(active.any()):
            break
        sel = active.nonzero().reshape(-1)
        hrow = (h0.reshape(-1)[cols[sel]] / 2.0 ** t).to(h0.dtype)
        ev = evaluate(hrow, cols[sel])
        store[t] = (sel, ev)
        nf, cr = bad_at(ev, sel)
        nan_col[sel[nf]] = True
        start[sel[nf | cr]] = t + 1
        t += 1
    done = usable(start) & (start + width - 1 < t)
    if not bool(done.any()):
        return first
    pos = done.nonzero().reshape(-1)  # positions in cols
    sub = cols[pos]
    m = pos.numel()
    window = []
    for k in range(width):
        steps_k = start[pos] + k
        parts: list[Any] = [[torch.empty((m, *y.shape), dtype=rows[0][0][i].dtype)
                             for i, y in enumerate(f0)],
                            [torch.empty((m, *y.shape), dtype=rows[0][1][i].dtype)
                             for i, y in enumerate(f0)],
                            torch.empty(m, dtype=rows[0][2].dtype),
                            torch.empty(m, dtype=rows[0][3].dtype)]
        for tt in steps_k.unique().tolist():
            here = (steps_k == tt).nonzero().reshape(-1)  # positions in sub
            if tt < K:
                src, at = rows[tt], sub[here]
            else:
                sel, src = store[tt]
                lookup = torch.full((cols.numel(),), -1, dtype=torch.long)
                lookup[sel] = torch.arange(sel.numel())
                at = lookup[pos[here]]
            for i in range(len(f0)):
                parts[0][i][here] = src[0][i][at]
                parts[1][i][here] = src[1][i][at]
            parts[2][here] = src[2].reshape(-1)[at].to(parts[2].dtype)
            parts[3][here] = src[3].reshape(-1)[at].to(parts[3].dtype)
        window.append((tuple(parts[0]), tuple(parts[1]), parts[2], parts[3]))
    h_sub = (h0.reshape(-1)[sub] / 2.0 ** start[pos].to(torch.float64)).to(h0.dtype)
    again = analyse(window, lambda h: evaluate(h, sub), h_sub, xscale.reshape(-1)[sub])
    out = tuple([t_.clone() for t_ in field] for field in first)
    for i in range(len(f0)):
        take = redo[i][sub]
        for f, field in enumerate(out):
            cur = field[i][sub]
            field[i][sub] = torch.where(take, again[f][i].to(cur.dtype), cur)
    return out
