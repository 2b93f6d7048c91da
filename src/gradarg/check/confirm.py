"""Second looks at a wrong block: does what the first comparison suggests hold up?

Each test here evaluates the function and its backward again before the verdict names a
pattern or a region:

- :meth:`Confirm.region_holds`: "wrong exactly where x < t" holds again with the input's values
  shuffled (a split of one sample by chance does not);
- :meth:`Confirm.error_is_smooth`: an error that looks like rounding stays the same at a nearby
  point, so it is a formula slightly off;
- :meth:`Confirm.sampled_transpose`: a transposition, tested on the sampled columns.

The same check at other input values comes from the ``at`` function the run gives (a fresh
backward under test and reference there).  A new confirmation (the forward flat in a
neighbourhood, a region that enough elements support) is one more method here, called by
:mod:`.verdict`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import torch

from .blocks import Block, compare
from .patterns import Pattern
from .tolerance import entry_tolerance

if TYPE_CHECKING:
    from .references import Reference
    from .under_test import BackwardUnderTest

__all__ = ["Confirm"]

POINTS = 2  # fresh points (the input's values shuffled) at which a region must hold again
NEARBY = 2.0 ** -6  # relative move of the inputs to a nearby point: above low precisions' unit
SMOOTH = 0.9  # correlation of the errors at two nearby points that makes an error systematic

_FAILS = (RuntimeError, ValueError, TypeError, IndexError)


class Confirm:
    """Second looks at blocks of the run of ``bwd`` and ``ref``; ``at(xs)`` gives the backward
    under test and the reference at other values ``xs`` of the checked inputs."""

    def __init__(self, bwd: BackwardUnderTest, ref: Reference,
                 at: Callable[[tuple[torch.Tensor, ...]],
                              tuple[BackwardUnderTest, Reference]]) -> None:
        self.bwd, self.ref, self.at = bwd, ref, at

    def _elsewhere(self, k: int, j: int, xj: torch.Tensor, block: Block) -> Block:
        """Block ``(k, j)`` again with input ``j`` at ``xj``: the same rows (against a
        reference that gives rows) or columns."""
        xs = list(self.bwd.s.xs)
        xs[j] = xj
        bwd, ref = self.at(tuple(xs))
        if ref.by_rows:
            return compare(bwd, ref, k, j, rows=block.rows, cols=block.cols)
        return compare(bwd, ref, k, j, cols=block.cols)

    def region_holds(self, k: int, j: int, block: Block, split: tuple[str, float]) -> bool:
        """Does "wrong exactly where x op t" hold again with the input's values shuffled?"""
        op, t = split
        x = self.bwd.s.xs[j]
        n = x.numel()
        idx = torch.arange(n) if block.cols is None else block.cols
        for _ in range(POINTS):
            perm = torch.randperm(n, generator=self.bwd.gen)
            xj = x.reshape(-1)[perm].reshape(x.shape).clone()
            try:
                wrong = self._elsewhere(k, j, xj, block).wrong().any(0)
            except _FAILS:
                return False
            xv = xj.reshape(-1)[idx].double()
            side = xv < t if op == "<" else xv > t
            if not torch.equal(wrong, side):
                return False
        return True

    def error_is_smooth(self, k: int, j: int, block: Block, wrong: torch.Tensor) -> bool:
        """Is an error that looks like rounding really a small, systematic one?  Rounding
        in a lower precision changes at random when the inputs move by more than its unit
        (here ``NEARBY`` relative); the error of a formula that is slightly off moves with
        them, so errors that stay correlated (> ``SMOOTH``) at a nearby point are
        systematic."""
        x = self.bwd.s.xs[j]
        noise = torch.randn(x.shape, generator=self.bwd.gen, dtype=torch.float64)
        xj = (x.double() * (1 + NEARBY * noise)).to(x.dtype)
        try:
            there = self._elsewhere(k, j, xj, block)
            if (not self.ref.by_rows and there.rows is not None and block.rows is not None
                    and not torch.equal(there.rows, block.rows)):
                return False
        except _FAILS:
            return False
        e1, e2 = (block.got - block.expected)[wrong], (there.got - there.expected)[wrong]
        if e1.numel() < 3:
            return False
        c = float((e1 * e2).sum()) / max(float(e1.norm() * e2.norm()), 1e-300)
        return c > SMOOTH

    def sampled_transpose(self, k: int, j: int, block: Block,
                          names: tuple[str, str]) -> Pattern | None:
        """The transposition patterns, tested on a sampled block: the backward's sampled
        columns against the reference's columns at the transposed indices (two equally long
        input dimensions swapped), or, for a square block, the backward's rows at the sampled
        indices against the reference's columns there (rows and columns exchanged)."""
        yname, xname = names
        x = self.bwd.s.xs[j]
        m, n = self.bwd.outs[k].numel(), x.numel()
        cols, rows = block.cols, block.rows
        got, exp, tol = block.got, block.expected, block.tolerance
        if cols is None or self.ref.by_rows:
            return None
        if not bool(block.wrong().any()):
            return None
        try:
            shape = tuple(x.shape)
            for a in range(len(shape)):
                for b in range(a + 1, len(shape)):
                    if shape[a] != shape[b] or shape[a] < 2:
                        continue
                    perm = list(range(len(shape)))
                    perm[a], perm[b] = perm[b], perm[a]
                    flat = torch.arange(n).reshape(shape).permute(perm).reshape(-1)
                    swapped = flat[cols]
                    vals, errs = self.ref.columns(j, swapped)
                    ref_t = vals[k] if rows is None else vals[k][rows]
                    err_t = errs[k] if rows is None else errs[k][rows]
                    tol_t = entry_tolerance(ref_t, err_t, self.bwd.rtol)
                    if bool(((got - ref_t).abs() <= torch.maximum(tol, tol_t)).all()):
                        return Pattern("transposed", (
                            f"transposed: the backward gives ∂{yname}/∂{xname} with its input "
                            f"dimensions {a} and {b} swapped (a matrix used where its "
                            f"transpose belongs; tested on the sampled columns)"))
            if m == n and rows is None:
                g_rows = self.bwd.rows(k, j, cols)  # (c × n): the backward's rows at cols
                # rows of the backward = columns of the reference: J given where Jᵀ belongs
                if bool(((g_rows.T - exp).abs() <= tol).all()):
                    return Pattern("transposed", (
                        f"transposed: the backward gives ∂{yname}/∂{xname} with rows and "
                        f"columns exchanged (a matrix used where its transpose belongs; "
                        f"tested on the sampled columns)"))
        except (RuntimeError, ValueError, IndexError):
            return None
        return None
