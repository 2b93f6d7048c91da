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

How: an entry is taken up again when ``f(x)`` is finite, ``f(x ± h_k)`` is not at some step
``h_k`` of the table, and the table left it unresolved.  Its column (input element or
direction) is shifted to finer steps: the window of ``W`` consecutive halvings starts one
halving below the last step at which one of those entries was not finite, evaluated one
halving at a time (a step that is not finite moves the start again), so the window is the
coarsest run of ``W`` finite steps, with ``W`` = the column's own number of steps plus
``EXTRA`` (the first finite steps lie within a factor 2 of ``d``, where the truncation error
is largest; the extra halvings give the table room to settle).  The same table (:func:`.
fd_error._table`, with its rounding bounds, off-grid self-check and kink tests) then judges
the window, and its estimate replaces the unresolved one for those entries only: every entry
whose table was finite keeps what it had.

The **precision floor**: a window is only tried while its third step (the finest step of the
noise bound of its coarsest estimate) is at least ``FLOOR = C·eps·s / UNRESOLVED`` with ``s =
|x|`` (1 at ``x = 0``): below it the rounding of ``x + h`` alone, ``C·eps·|x|·|f'| / h`` in the
noise bound of :mod:`.fd_error`, exceeds 1% of the derivative, so no estimate there could be
resolved.  In float64 that is ``3.5e-13 |x|``, about 33 halvings below the first step at
``|x| = 1``.  Where ``f`` is not finite on one side at every step (``sqrt`` exactly at 0,
``acos`` exactly at 1: a one-sided derivative that is infinite), the search goes to the floor
and the entry stays unresolved, at the cost of one evaluation of that column per halving.

A pole crossed with finite values (``1 / (x - a)`` with ``a`` between ``x - h`` and ``x``) is
not seen here: there the central differences are finite and do not converge, and the entry is
unresolved (never called wrong), unless the steps finer than ``d`` already resolve it.

This module does not import :mod:`.fd_error` (which calls it): the table is passed in.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

from .fd_settle import UNRESOLVED

__all__ = ["EXTRA", "floor_steps", "past_nonfinite"]

EXTRA = 3  # halvings added to a shifted window beyond the column's own number of steps


def floor_steps(xscale: torch.Tensor, rounding: float) -> torch.Tensor:
    """The precision floor per column (the module docstring): ``rounding * s / UNRESOLVED``
    with ``s = xscale`` (1 where it is 0), float64, shape ``(N,)``."""
    s = xscale.reshape(-1).double()
    s = torch.where(s > 0, s, torch.ones_like(s))
    return rounding * s / UNRESOLVED


def _nonfinite(row: Sequence[Any], i: int) -> torch.Tensor:
    plus, minus = row[0][i], row[1][i]
    return ~torch.isfinite(plus) | ~torch.isfinite(minus)


def past_nonfinite(first: tuple, rows: list, evaluate: Callable, f0: Sequence[torch.Tensor],
                   h0: torch.Tensor, xscale: torch.Tensor, rounding: float,
                   analyse: Callable) -> tuple:
    """Re-estimate, on finer steps, the entries that ``first`` left unresolved because ``f``
    was not finite at some of its steps (the module docstring).

    ``first``: ``(value, error, kink, still, alone)`` of the table over ``rows`` (evaluations
    at the nominal steps ``h0 / 2**k``, ``k < K``; each ``(plus, minus, h_plus, h_minus)``);
    ``evaluate(h, cols)`` evaluates the columns ``cols`` (a long tensor) at steps ``h`` (shape
    ``(len(cols),)``); ``rounding``: ``C·eps``; ``analyse(rows, evaluate, h0, xscale)``: the
    table over other rows and columns.  Returns ``first``'s lists, with the re-estimated
    entries replaced (the tensors of ``first`` are not modified).
    """
    error = first[1]
    n, K = h0.shape[0], len(rows)
    redo, anybad = [], torch.zeros(n, dtype=torch.bool)
    for i, y in enumerate(f0):
        bad = torch.zeros((n, *y.shape), dtype=torch.bool)
        for row in rows:
            bad |= _nonfinite(row, i)
        r = bad & torch.isfinite(y).unsqueeze(0) & ~torch.isfinite(error[i])
        redo.append(r)
        anybad |= r.reshape(n, -1).any(1)
    if not bool(anybad.any()):
        return first
    cols = anybad.nonzero().reshape(-1)
    width = K + EXTRA

    def bad_at(row, sel: torch.Tensor) -> torch.Tensor:
        """Columns ``sel`` (positions in ``cols``) where an entry to redo is not finite."""
        out = torch.zeros(sel.numel(), dtype=torch.bool)
        for i in range(len(f0)):
            nf = _nonfinite(row, i) & redo[i][cols[sel]]
            out |= nf.reshape(sel.numel(), -1).any(1)
        return out

    every = torch.arange(cols.numel())
    start = torch.zeros(cols.numel(), dtype=torch.long)
    for k in range(K):
        row = (tuple(p[cols] for p in rows[k][0]), tuple(q[cols] for q in rows[k][1]))
        start = torch.where(bad_at(row, every), torch.full_like(start, k + 1), start)
    h0c = h0.reshape(-1)[cols].double()
    floor = floor_steps(xscale.reshape(-1)[cols], rounding)

    def usable(s: torch.Tensor) -> torch.Tensor:
        return h0c / 2.0 ** (s + 2) >= floor

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
        b = bad_at(ev, sel)
        start[sel[b]] = t + 1
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
