"""Where a backward is wrong: which entries of a wrong (output, input) block, within a budget,
and on which side of a threshold of the input they lie.

A block whose random probes disagree is compared on a random sample of its columns (or, against
an intended backward, its rows); when the sample shows nothing, group tests over all columns
(:func:`halving`: random groups, then halves of the groups that differ) find the columns (rows)
that hold the errors, and when those show nothing either, the sample is compared again against
the rounding the same backward shows on float64 copies (:meth:`Localizer.rounding_block`: a
backward that computes in a lower precision than its function).  What was sampled is stated in
the result (``PairCheck.sampled``).  The wrong entries are listed largest error first
(:func:`worst_entries`, :class:`WrongEntry`); when the wrong columns are exactly the elements
of the input below or above a threshold (:func:`threshold`), supported by at least
``MIN_SUPPORT`` wrong elements (:func:`supported`), and no right element lies inside it
(:meth:`.confirm.Confirm.region_uncontradicted`), :func:`region` says so.  A new way of
choosing what to compare (more group tests, another sample) goes in :class:`Localizer`; a new
kind of region next to :func:`threshold`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from ..show.render import fmt
from .blocks import Block, compare
from .budget import columns_for, fallback_rows, rows_for
from .tolerance import C_PRECISION, LOOSE, backward_rtol, entry_tolerance, loose_tolerance

if TYPE_CHECKING:
    from collections.abc import Callable

    from .references import Reference
    from .under_test import BackwardUnderTest

__all__ = ["Localizer", "WrongEntry", "halving", "inside", "region", "supported",
           "threshold", "unravel", "worst_entries"]

GROUPS = 16  # group tests start from this many groups of indices
KEEP = 8  # at least this many bad groups are halved per level
WORST = 5  # the wrong entries listed per block
MIN_SUPPORT = 3  # a region is stated only when at least this many wrong elements lie in it


@dataclass(frozen=True)
class WrongEntry:
    """One Jacobian entry ``∂y[output_index] / ∂x[input_index]`` the backward gets wrong."""

    output_index: tuple[int, ...]
    input_index: tuple[int, ...]
    expected: float
    got: float

    @property
    def error(self) -> float:
        """``|got - expected|``, in the units of the Jacobian entry."""
        return abs(self.got - self.expected)


def unravel(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The index into ``shape`` of flat index ``flat``."""
    out = []
    for size in reversed(shape):
        out.append(flat % size)
        flat //= size
    return tuple(reversed(out))


def worst_entries(got: torch.Tensor, expected: torch.Tensor,
                  wrong: torch.Tensor) -> list[tuple[int, int, float, float]]:
    """The ``WORST`` wrong entries of an ``m × n`` block with the largest absolute error,
    largest first: ``(row, column, expected, got)``."""
    err = torch.where(wrong, (got - expected).abs(), torch.full_like(got, -1.0))
    k = min(WORST, int(wrong.sum()))
    if k == 0:
        return []
    idx = torch.topk(err.reshape(-1), k).indices.tolist()
    n = got.shape[1]
    return [(i // n, i % n, float(expected.reshape(-1)[i]), float(got.reshape(-1)[i]))
            for i in idx]


# ------------------------------------------------------------------ regions


def threshold(wrong_cols: torch.Tensor, x: torch.Tensor) -> tuple[str, float] | None:
    """``("<", t)`` or ``(">", t)`` when the wrong columns are exactly the elements of ``x``
    below (above) ``t``, with ``t`` a short number between the two groups; else ``None``."""
    flat = x.detach().reshape(-1).double()
    n = flat.numel()
    k = int(wrong_cols.sum())
    if k == 0 or k == n or n < 3:
        return None
    order = torch.argsort(flat)
    w = wrong_cols[order]
    for side, pick in (("<", w[:k]), (">", w[n - k:])):
        if bool(pick.all()):
            inside = flat[order[:k]] if side == "<" else flat[order[n - k:]]
            outside = flat[order[k:]] if side == "<" else flat[order[: n - k]]
            lo, hi = (float(inside.max()), float(outside.min())) if side == "<" else (
                float(outside.max()), float(inside.min()))
            if lo == hi:
                continue
            t = 0.0 if lo < 0 < hi or (side == "<" and hi == 0) or (side == ">" and lo == 0) \
                else _round_between(lo, hi)
            return side, t
    return None


def supported(wrong_cols: torch.Tensor) -> bool:
    """Do enough wrong elements (``MIN_SUPPORT``) support a region?  One or two wrong
    elements on one side of a threshold say nothing about the elements between them."""
    return int(wrong_cols.sum()) >= MIN_SUPPORT


def inside(split: tuple[str, float], x: torch.Tensor) -> torch.Tensor:
    """The elements of ``x`` inside the region ``split`` (``("<", t)`` or ``(">", t)``)."""
    op, t = split
    xd = x.detach().double()
    return xd < t if op == "<" else xd > t


def region(wrong_cols: torch.Tensor, x: torch.Tensor, name: str) -> str | None:
    """``"where x < 0"``-like text when the wrong columns are exactly the elements of ``x`` on
    one side of a threshold (:func:`threshold`), else ``None``."""
    split = threshold(wrong_cols, x)
    if split is None:
        return None
    side, t = split
    return (f"where {name} {side} {fmt(t, 4)} ({int(wrong_cols.sum())} of "
            f"{x.numel()} elements)")


def _round_between(lo: float, hi: float) -> float:
    """A short number strictly between ``lo`` and ``hi``."""
    for digits in range(1, 8):
        for cand in (round((lo + hi) / 2, digits),):
            if lo < cand < hi:
                return cand
    mid = (lo + hi) / 2
    return mid if math.isfinite(mid) else lo


# ------------------------------------------------------------------ bounded localisation


class Localizer:
    """Which entries of a wrong block to compare, within the budget of :mod:`.budget`;
    ``at(xs)`` gives the backward under test and the reference at other values of the
    checked inputs (for :meth:`rounding_block`)."""

    def __init__(self, bwd: BackwardUnderTest, ref: Reference,
                 at: Callable[[tuple[torch.Tensor, ...]],
                              tuple[BackwardUnderTest, Reference]] | None = None) -> None:
        self.bwd, self.ref, self.at = bwd, ref, at

    def block(self, k: int, j: int) -> tuple[Block, str, str]:
        """Block ``(k, j)`` compared on a sample; what was sampled (for ``PairCheck.sampled``);
        and how the compared elements were chosen (``"random"``; ``"screened"`` when group
        tests pointed to them; ``"rounding"`` when a random sample was compared against the
        rounding measured on float64 copies, :meth:`rounding_block`)."""
        bwd = self.bwd
        m, n = bwd.outs[k].numel(), bwd.s.xs[j].numel()
        how = "random"
        if self.ref.by_rows:
            r = rows_for(m, n)
            rows = None if r == m else torch.randperm(m, generator=bwd.gen)[:r].sort().values
            blk = compare(bwd, self.ref, k, j, rows=rows)
            if rows is not None and not bool(blk.wrong().any()):
                # a random sample of rows missed errors confined to a few: group tests
                found = self.screen_rows(k, j, r)
                if found is not None:
                    blk, how = compare(bwd, self.ref, k, j, rows=found), "screened"
        else:
            c = columns_for(n, m)
            perm = torch.randperm(n, generator=bwd.gen)
            cols = None if c == n else perm[:c].sort().values
            blk = compare(bwd, self.ref, k, j, cols=cols)
            if cols is not None and not bool(blk.wrong().any()):
                # a random sample missed sparse errors: find the columns by group tests
                found = self.screen_columns(k, j, c)
                if found is not None:
                    screened = compare(bwd, self.ref, k, j, cols=found)
                    if bool(screened.wrong().any()):
                        blk, how = screened, "screened"
            if not bool(blk.wrong().any()):
                # errors below the fixed tolerance of each entry: against the rounding
                # this backward shows in float64 (a lower precision than its function's)
                fine = self.rounding_block(k, j, blk.cols if how == "random" else cols)
                if fine is not None and bool(fine.wrong().any()):
                    blk, how = fine, "rounding"
        parts = []
        if blk.cols is not None:
            parts.append(f"{blk.cols.numel()} of {n} columns (elements of {bwd.s.names[j]})")
        if blk.rows is not None:
            parts.append(f"{blk.rows.numel()} of {m} rows (elements of {bwd.out_names[k]})")
        elif blk.cols is not None:
            parts.append(f"all {m} rows")
        return blk, ", ".join(parts), how

    def rounding_block(self, k: int, j: int, cols: torch.Tensor | None) -> Block | None:
        """Block ``(k, j)`` at ``cols`` (all columns for ``None``) on a sample of rows
        (:func:`.budget.fallback_rows`), compared against the rounding this backward shows.

        The rows come from one-hot backward passes, in the inputs' dtype and on float64
        copies (the same code in float64); the reference on float64 copies.  An entry is
        wrong when it is farther from the reference than ``LOOSE`` times the difference
        between its two runs (the rounding of the inputs' dtype, measured), plus
        ``C_PRECISION`` times the forward's relative rounding, plus float64's tolerance: so
        a backward that rounds through a lower precision than its function's (a bfloat16
        sum in a float32 RMSNorm) shows on entries too small for the fixed tolerance, and
        a right one never does.  ``None`` without low-precision inputs (no float64 twin),
        against an intended backward, or when the function fails on float64 copies.
        """
        bwd = self.bwd
        if self.at is None or bwd.twin is None or self.ref.by_rows:
            return None
        m, n = bwd.outs[k].numel(), bwd.s.xs[j].numel()
        idx = torch.arange(n) if cols is None else cols
        r = fallback_rows(m, idx.numel(), n)
        rows = None if r == m else torch.randperm(m, generator=bwd.gen)[:r].sort().values
        ridx = torch.arange(m) if rows is None else rows
        try:
            bwd64, ref64 = self.at(tuple(x.detach().double() for x in bwd.s.xs))
            got = bwd.rows(k, j, ridx, idx)
            got64 = bwd64.rows(k, j, ridx, idx)
            vals, errs = ref64.columns(j, idx)
        except (RuntimeError, ValueError, TypeError, IndexError):
            return None
        exp, err = vals[k][ridx], errs[k][ridx]
        tol = (entry_tolerance(exp, err, backward_rtol(torch.float64), bwd.floor)
               + LOOSE * (got - got64).abs()
               + C_PRECISION * bwd.forward_rounding * exp.abs())
        return Block(got, exp, tol, rows, cols)

    def screen_columns(self, k: int, j: int, c: int) -> torch.Tensor | None:
        """Input elements of ``j`` whose columns hold the errors, by group tests.

        A group of candidate columns gets one random direction ``u`` supported on it (weights
        of random sign and size in [0.5, 1.5], :func:`_weights`), and
        ``J u`` from the backward is compared with the reference's: a group whose products
        differ holds a wrong column.  Groups that differ are halved and tested again
        (:func:`halving`), so ``k`` wrong columns among ``n`` take ``O(k log n)`` products.
        ``None`` when no group differs.
        """
        bwd = self.bwd
        x = bwd.s.xs[j]
        n = x.numel()
        nin = len(bwd.s.xs)

        def test(parts: list[torch.Tensor]) -> list[bool]:
            dirs = torch.zeros(len(parts), n, dtype=x.dtype)
            for i, p in enumerate(parts):
                dirs[i, p] = _weights(p.numel(), bwd.gen).to(x.dtype)
            rows, got = bwd.columns(k, j, None, dirs)
            v_, e_ = self.ref.directional_chunked(
                [[dirs[i].reshape(x.shape) if jj == j else None for jj in range(nin)]
                 for i in range(len(parts))], bwd.outs[k].numel())
            exp = torch.stack([v[k].reshape(-1) for v in v_]).T
            err = torch.stack([e[k].reshape(-1) for e in e_]).T
            if rows is not None:
                exp, err = exp[rows], err[rows]
            scale = exp.abs().amax(0) + got.abs().amax(0)
            return ((got - exp).abs() > loose_tolerance(scale, bwd.rtol, err)).any(0).tolist()

        return halving(n, test, c, bwd.gen)

    def screen_rows(self, k: int, j: int, r: int) -> torch.Tensor | None:
        """Output elements of ``k`` whose rows (against the intended backward) hold the
        errors, by group tests: an upstream gradient ``v`` supported on a group, the
        backward's ``vᵀJ`` against the intended one.  ``None`` when no group differs."""
        bwd = self.bwd
        y = bwd.outs[k]
        m = y.numel()

        def test(parts: list[torch.Tensor]) -> list[bool]:
            bad = []
            for p in parts:
                v = torch.zeros(m, dtype=y.dtype)
                v[p] = _weights(p.numel(), bwd.gen).to(y.dtype)
                v = v.reshape(y.shape)
                got = bwd.backward({k: v})[0][j].double()
                exp = self.ref.vjp({k: v})[j].double()
                scale = float(exp.abs().max()) + float(got.abs().max())
                bad.append(bool(((got - exp).abs() > loose_tolerance(scale, bwd.rtol)).any()))
            return bad

        return halving(m, test, r, bwd.gen)


def _weights(n: int, gen: torch.Generator) -> torch.Tensor:
    """Random weights of a group test: a random sign times a size in [0.5, 1.5], so that no
    member of the group hides behind a weight near zero (a normal draw below 0.01 would, one
    time in a hundred) and two wrong members rarely cancel."""
    sign = torch.randint(0, 2, (n,), generator=gen, dtype=torch.float64) * 2 - 1
    return sign * (0.5 + torch.rand(n, generator=gen, dtype=torch.float64))


def halving(n: int, test, want: int, gen: torch.Generator) -> torch.Tensor | None:
    """Adaptive group testing: indices among ``range(n)`` for which ``test`` says "bad".

    ``test(parts)`` gets a list of index tensors (groups) and says for each whether it holds
    a bad index.  The indices are shuffled into ``GROUPS`` random groups; the bad ones are
    halved and tested again, as many of them per level as indices are still wanted (at least
    ``KEEP``; a random choice when more are bad; only ``KEEP`` when every first group is bad,
    as then bad indices are everywhere), until single indices are left: ``k`` bad indices
    among ``n`` take about ``GROUPS + 2 min(k, want) log2(n / GROUPS)`` tests.
    Returns up to ``want`` bad indices (sorted), or ``None`` when no group of the first
    level is bad.
    """
    perm = torch.randperm(n, generator=gen)
    level = [p for p in perm.chunk(min(GROUPS, n)) if p.numel()]
    found: list[torch.Tensor] = []
    first, dense = True, False
    while level and len(found) < want:
        bad = [p for p, b in zip(level, test(level), strict=True) if b]
        if first and not bad:
            return None
        if first:  # every first group bad: bad indices everywhere, KEEP of them will do
            dense = len(bad) == len(level)
        first = False
        single = [p for p in bad if p.numel() == 1]
        found += single
        rest = [p for p in bad if p.numel() > 1]
        # a few bad indices: all of them (each bad group holds at least one)
        room = KEEP if dense else max(KEEP, want - len(found))
        if len(rest) > room:
            pick = torch.randperm(len(rest), generator=gen)[:room].tolist()
            rest = [rest[i] for i in pick]
        level = [h for p in rest for h in p.chunk(2) if h.numel()]
    if not found:
        return None
    return torch.cat(found)[:want].sort().values
