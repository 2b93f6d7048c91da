"""Evaluations of ``f`` for the finite differences of :mod:`.fd_error`: every column (an input
element moved to ``x + h`` and to ``x - h``) as one row of a batch, through ``torch.func.vmap``
where ``f`` allows it (one call per step), else one row at a time; the CPU generator is reset
before each so that every row sees the same random draws as ``f(x)``."""

from __future__ import annotations

import torch

from .functorch import VMAP_ERRORS, batched
from .graph import call, copies

ROW_BUDGET = 1 << 22  # elements per batched evaluation (rows × output size)

__all__ = ["ROW_BUDGET", "evaluate_rows", "moved_columns"]


def evaluate_rows(fn, xs, rows: dict[int, torch.Tensor], state) -> tuple[torch.Tensor, ...]:
    """``fn`` with input ``j`` replaced by every row of ``rows[j]``: outputs with a batch dim."""
    js = list(rows)

    def at(*bs: torch.Tensor) -> tuple[torch.Tensor, ...]:
        args = copies(xs, keep=js)       # the rows are made for this call
        for j, b in zip(js, bs, strict=True):
            args[j] = b
        return call(fn, args)[0]

    torch.set_rng_state(state)
    try:
        return batched(at, [rows[j] for j in js], randomness="same")
    except VMAP_ERRORS:
        out = []
        for r in range(next(iter(rows.values())).shape[0]):
            torch.set_rng_state(state)
            out.append(at(*(rows[j][r] for j in js)))
        return tuple(torch.stack(col) for col in zip(*out, strict=True))


def moved_columns(fn, xs, j, flat, xp, xm, shape, state, index=None):
    """Evaluate ``fn`` with element ``c`` of input ``j`` moved to ``xp[c]`` and to ``xm[c]``
    (element ``index[c]`` when ``index`` is given; ``xp``, ``xm`` then hold those only)."""
    n = flat.numel()
    cols = torch.arange(n) if index is None else index
    outs_p: list[list[torch.Tensor]] = []
    outs_m: list[list[torch.Tensor]] = []
    chunk = max(1, ROW_BUDGET // max(1, 2 * n))
    for start in range(0, cols.numel(), chunk):
        stop = min(cols.numel(), start + chunk)
        idx = cols[start:stop]
        pos = torch.arange(start, stop)
        base = flat.expand(stop - start, n).clone()
        rows_p = base.clone()
        rows_p[torch.arange(stop - start), idx] = xp[pos]
        rows_m = base
        rows_m[torch.arange(stop - start), idx] = xm[pos]
        rows = torch.cat([rows_p, rows_m]).reshape((2 * (stop - start), *shape))
        res = evaluate_rows(fn, xs, {j: rows}, state)
        outs_p.append([r[: stop - start] for r in res])
        outs_m.append([r[stop - start:] for r in res])
    plus = tuple(torch.cat(col) for col in zip(*outs_p, strict=True))
    minus = tuple(torch.cat(col) for col in zip(*outs_m, strict=True))
    return plus, minus
