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

__all__ = ["Block", "compare", "wrong_entries"]


@dataclass(frozen=True)
class Block:
    """Entries of block ``(k, j)``: ``got`` from the backward, ``expected`` from the reference,
    ``tolerance`` per entry, all ``r × c`` float64; ``rows`` and ``cols`` the flat indices of the
    output and input elements compared (``None``: all of them)."""

    got: torch.Tensor
    expected: torch.Tensor
    tolerance: torch.Tensor
    rows: torch.Tensor | None
    cols: torch.Tensor | None

    def wrong(self) -> torch.Tensor:
        """Where the backward is outside the tolerance (boolean, ``r × c``); a NaN on one
        side only is wrong, NaN on both sides is not."""
        return wrong_entries(self.got, self.expected, self.tolerance)


def wrong_entries(got: torch.Tensor, expected: torch.Tensor,
                  tolerance: torch.Tensor) -> torch.Tensor:
    """``|got - expected| > tolerance``, with a NaN (or infinity) on one side only wrong and
    the same non-finite value on both sides right."""
    diff = (got - expected).abs()
    same = (got == expected) | (got.isnan() & expected.isnan())
    return ~(diff <= tolerance) & ~same


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
        return Block(got, exp, entry_tolerance(exp, 0.0, bwd.rtol), rows, cols)
    idx = torch.arange(bwd.s.xs[j].numel()) if cols is None else cols
    r, got = bwd.columns(k, j, idx)
    vals, errs = ref.columns(j, idx)
    exp, err = vals[k], errs[k]
    if r is not None:
        exp, err = exp[r], err[r]
    return Block(got, exp, entry_tolerance(exp, err, bwd.rtol), r, cols)
