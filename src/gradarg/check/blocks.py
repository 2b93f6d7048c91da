"""Some entries of one (output, input) block of the two Jacobians, side by side, with the
tolerance of each: what every comparison of ``check_backward`` looks at.

:func:`compare` takes rows (against an intended backward, which gives rows) or columns (against
a reference that gives Jacobian–vector products) of block ``(k, j)`` from the backward under test
and from the reference, and the tolerance of :func:`~.tolerance.entry_tolerance`.  The bounded
localisation (:mod:`.localize`) and the second looks at a wrong block (:mod:`.confirm`) both go
through it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from .tolerance import entry_tolerance

if TYPE_CHECKING:
    from .references import Reference
    from .under_test import BackwardUnderTest

__all__ = ["Block", "compare", "unchecked_columns", "unchecked_nan_columns", "unchecked_rows",
           "wrong_entries"]


@dataclass(frozen=True)
class Block:
    """Entries of block ``(k, j)``: ``got`` from the backward, ``expected`` from the reference,
    ``tolerance`` per entry, all ``r × c`` float64; ``rows`` and ``cols`` the flat indices of the
    output and input elements compared (``None``: all of them); ``overflow``: entries where the
    backward is not finite in the inputs' dtype while the same backward on float64 copies
    matches the reference (``None``: none; :meth:`.checker.Checker.overflowed`), not wrong."""

    got: torch.Tensor
    expected: torch.Tensor
    tolerance: torch.Tensor
    rows: torch.Tensor | None
    cols: torch.Tensor | None
    overflow: torch.Tensor | None = None

    def wrong(self) -> torch.Tensor:
        """Where the backward is outside the tolerance (boolean, ``r × c``); a NaN on one
        side only is wrong, NaN on both sides is not, nor an :attr:`overflow` entry."""
        wrong = wrong_entries(self.got, self.expected, self.tolerance)
        return wrong if self.overflow is None else wrong & ~self.overflow


def wrong_entries(got: torch.Tensor, expected: torch.Tensor,
                  tolerance: torch.Tensor) -> torch.Tensor:
    """``|got - expected| > tolerance``, with a NaN (or infinity) on one side only wrong and
    the same non-finite value on both sides right; an entry with an infinite tolerance (the
    reference could not resolve it) is never wrong."""
    diff = (got - expected).abs()
    same = (got == expected) | (got.isnan() & expected.isnan())
    return ~(diff <= tolerance) & ~same & ~torch.isinf(tolerance)


def unchecked_columns(tol: torch.Tensor, x: torch.Tensor,
                      cols: torch.Tensor | None) -> torch.Tensor:
    """``tol`` (``r × c``) with an infinite tolerance in the columns of the elements of ``x``
    that are NaN or infinite (``cols``: the flat indices compared, ``None`` for all): there a
    reference's 0 and a backward's NaN (``0 · NaN`` in a chain rule) are both what IEEE
    arithmetic gives, so neither is checked."""
    bad = ~torch.isfinite(x.detach().reshape(-1))
    if cols is not None:
        bad = bad[cols]
    if not bool(bad.any()):
        return tol
    return tol.masked_fill(bad.unsqueeze(0), float("inf"))


def unchecked_rows(tol: torch.Tensor, y: torch.Tensor,
                   rows: torch.Tensor | None) -> torch.Tensor:
    """``tol`` (``r × c``) with an infinite tolerance in the rows of the elements of the
    output ``y`` (in the function's own dtype) that are NaN or infinite (``rows``: the flat
    indices compared): ``exp(100.0)`` overflows float32, and the backward's ``inf`` there is
    what autograd gives, while a reference on float64 copies is finite."""
    bad = ~torch.isfinite(y.detach().reshape(-1))
    if rows is not None:
        bad = bad[rows]
    if not bool(bad.any()):
        return tol
    return tol.masked_fill(bad.unsqueeze(1), float("inf"))


def unchecked_nan_columns(tol: torch.Tensor, got: torch.Tensor) -> torch.Tensor:
    """``tol`` with the whole column infinite where the column has an unchecked entry and the
    backward gives NaN in it: ``0 · inf`` (an upstream gradient 0 against a derivative that
    overflows, ``exp(1000.0)``) is NaN in every row of that column, as autograd computes it."""
    cols = torch.isinf(tol).any(0) & got.isnan().any(0)
    if not bool(cols.any()):
        return tol
    return tol.masked_fill(cols.unsqueeze(0), float("inf"))


def compare(bwd: BackwardUnderTest, ref: Reference, k: int, j: int,
            rows: torch.Tensor | None = None, cols: torch.Tensor | None = None) -> Block:
    """Block ``(k, j)`` at ``rows`` (a reference that gives rows) or ``cols`` (one that gives
    columns; the backward's columns may come on a sample of rows, then ``Block.rows`` says
    which)."""
    if ref.by_rows:
        idx = torch.arange(bwd.outs[k].numel()) if rows is None else rows
        got = bwd.rows(k, j, idx)
        exp = ref.rows(k, idx)[j]
        if cols is not None:
            got, exp = got[:, cols], exp[:, cols]
        tol = unchecked_columns(entry_tolerance(exp, 0.0, bwd.rtol, bwd.floor), bwd.s.xs[j], cols)
        tol = unchecked_nan_columns(unchecked_rows(tol, bwd.outs[k], rows), got)
        return Block(got, exp, tol, rows, cols)
    idx = torch.arange(bwd.s.xs[j].numel()) if cols is None else cols
    r, got = bwd.columns(k, j, idx)
    vals, errs = ref.columns(j, idx)
    exp, err = vals[k], errs[k]
    if r is not None:
        exp, err = exp[r], err[r]
    tol = unchecked_columns(entry_tolerance(exp, err, bwd.rtol, bwd.floor), bwd.s.xs[j], cols)
    tol = unchecked_nan_columns(unchecked_rows(tol, bwd.outs[k], r), got)
    return Block(got, exp, tol, r, cols)
