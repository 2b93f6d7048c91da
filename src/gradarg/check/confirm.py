"""Second looks at a wrong block: does what the first comparison suggests hold up?

Each test here evaluates the function or its backward again before the verdict names a
pattern or a region:

- :meth:`Confirm.region_holds`: "wrong exactly where x < t" holds again with the input's values
  shuffled (a split of one sample by chance does not);
- :meth:`Confirm.region_uncontradicted`: every element of the input inside that region, not
  only the compared ones, is wrong (one right element inside refutes it);
- :meth:`Confirm.is_rounding`: an error that looks like rounding is rounding: the backward's
  results depart from linearity in ``v`` (rounding does, a formula never) by as much as they
  depart from the reference; else a formula slightly off;
- :meth:`Confirm.forward_flat`: a backward nonzero where the Jacobian is zero looks meant (a
  straight-through estimator) only where the forward is flat in a neighbourhood but not
  independent of the input: finite differences of the forward at several step sizes;
- :meth:`Confirm.sampled_transpose`: a transposition, tested on the sampled columns.

The same check at other input values comes from the ``at`` function the run gives (a fresh
backward under test and reference there).  A new confirmation is one more method here, called
by :mod:`.verdict`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import torch

from .blocks import Block, compare
from .budget import columns_for
from .localize import inside
from .patterns import Pattern
from .tolerance import entry_tolerance

if TYPE_CHECKING:
    from .references import Reference
    from .under_test import BackwardUnderTest

__all__ = ["Confirm"]

POINTS = 2  # fresh points (the input's values shuffled) at which a region must hold again
# rounding: the errors against the reference at most this many times the backward's departure
# from linearity in v (about 0.6 times for rounding, 1e3 and more for a formula slightly off)
ROUNDING_RATIO = 8.0
LINEARITY_TRIALS = 3  # random pairs (v1, v2) whose g(v1) + g(v2) - g(v1 + v2) is measured
CONTRADICT = 1  # the elements inside a region checked for a right one: one sample's worth
FLAT_COLUMNS = 4  # input elements whose forward is perturbed by the flat-forward test
FLAT_STEPS = 12  # step sizes 4·max(1, |x|)·4^-s, s = 0..FLAT_STEPS-1 (float64 evaluation)
FLAT_SMALL = 3  # the forward is flat when the smallest this many steps change nothing

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

    def region_uncontradicted(self, k: int, j: int, block: Block,
                              split: tuple[str, float]) -> bool:
        """Is every element of input ``j`` inside the region ``split`` wrong, the elements
        the block did not compare included?  Up to ``CONTRADICT`` times
        :func:`.budget.columns_for` of those are compared (a random choice when there are
        more); one right element refutes the region."""
        if block.cols is None:  # every element was compared
            return True
        x = self.bwd.s.xs[j]
        m, n = self.bwd.outs[k].numel(), x.numel()
        within = inside(split, x).reshape(-1)
        within[block.cols] = False
        rest = within.nonzero().reshape(-1)
        if rest.numel() == 0:
            return True
        cap = CONTRADICT * columns_for(n, m)
        if rest.numel() > cap:
            rest = rest[torch.randperm(rest.numel(), generator=self.bwd.gen)[:cap]]
        try:
            there = compare(self.bwd, self.ref, k, j, cols=rest.sort().values)
        except _FAILS:
            return False
        return bool(there.wrong().any(0).all())

    def is_rounding(self, k: int, j: int, block: Block, affine: bool) -> bool:
        """Are the errors of block ``(k, j)`` what rounding does, or a formula slightly off?

        Rounding makes the backward's results depart from linearity in the upstream
        gradient: ``g(v1) + g(v2) - g(v1 + v2)`` (``g`` the gradient of input ``j`` at the
        compared elements, ``g(0)`` taken off when the backward adds a term that does not
        depend on ``v``) is about as large as the rounding error of each term, in any
        dtype; a formula that is slightly off is linear to the precision it computes in.
        So the errors ``g(v) - vᵀJ`` (``J`` the reference's entries of the block, ``v``
        random on the compared rows) count as rounding when they are at most
        ``ROUNDING_RATIO`` times that departure, summed over ``LINEARITY_TRIALS`` pairs.
        """
        bwd = self.bwd
        y = bwd.outs[k]
        m = y.numel()
        rows, cols = block.rows, block.cols
        exp = block.expected
        if not bool(torch.isfinite(exp).all()):
            return False

        def grad(v: torch.Tensor) -> torch.Tensor:
            g = bwd.backward({k: v.reshape(y.shape)})[0][j].reshape(-1).double()
            return g if cols is None else g[cols]

        g0 = grad(torch.zeros(m, dtype=y.dtype)) if affine else 0.0
        err = dev = 0.0
        try:
            for _ in range(LINEARITY_TRIALS):
                vs = []
                for _ in range(2):
                    v = torch.randn(m, generator=bwd.gen, dtype=torch.float64).to(y.dtype)
                    if rows is not None:
                        keep = torch.zeros(m, dtype=torch.bool)
                        keep[rows] = True
                        v = torch.where(keep, v, torch.zeros_like(v))
                    vs.append(v)
                g1, g2, g12 = grad(vs[0]), grad(vs[1]), grad(vs[0] + vs[1])
                for v, g in zip(vs, (g1, g2), strict=True):
                    vr = v.double() if rows is None else v.double()[rows]
                    err += float((g - g0 - vr @ exp).norm())
                dev += float((g1 + g2 - g12 - g0).norm())
        except _FAILS:
            return False
        return err <= ROUNDING_RATIO * dev

    def forward_flat(self, k: int, j: int, entries) -> tuple[str, int]:
        """Where the backward gives a gradient and the Jacobian is zero, what does the
        forward do?  ``entries`` are ``(output index, input index)`` pairs (flat indices) of
        such entries, largest first; up to ``FLAT_COLUMNS`` input elements are perturbed,
        alone, by ``±h`` for ``FLAT_STEPS`` step sizes ``h`` from ``4·max(1, |x|)`` down
        (on float64 copies of the inputs when the function takes them).

        Returns ``(kind, steps)``: ``"flat"`` when the outputs of the entries do not change
        for the smallest steps but do for a larger one (a piecewise-constant forward: what
        a straight-through estimator differentiates through), ``"independent"`` when they
        never change (the output does not depend on that input element here),
        ``"not flat"`` when they change at the smallest steps (the derivative is zero only
        at the point), ``"unknown"`` when the function fails on the perturbed inputs; and
        the number of step sizes tried.
        """
        bwd = self.bwd
        s = bwd.s
        xs = tuple(x.detach() for x in s.xs)
        try:
            up = tuple(x.double() for x in xs)
            torch.set_rng_state(bwd.state)
            with torch.no_grad():
                base = s.flat(*up)[k]
            if base.dtype != torch.float64:
                raise TypeError("fn does not compute in float64")
            xs, small = up, FLAT_STEPS
        except (RuntimeError, TypeError, ValueError):
            torch.set_rng_state(bwd.state)
            with torch.no_grad():
                base = s.flat(*xs)[k]
            # steps above the dtype's resolution
            small = min(FLAT_STEPS, 6 if xs[j].dtype == torch.float32 else 3)
        base = base.detach().reshape(-1)
        eps = torch.finfo(base.dtype).eps
        by_col: dict[int, list[int]] = {}
        for r, c in entries:
            if c in by_col or len(by_col) < FLAT_COLUMNS:
                by_col.setdefault(c, []).append(r)
        kinds = set()
        for c, out_rows in by_col.items():
            xc = float(xs[j].reshape(-1)[c])
            scale = 4 * max(1.0, abs(xc))
            moved = []
            for sstep in range(small):
                h = scale * 4.0 ** -sstep
                changed = False
                for sign in (1.0, -1.0):
                    xj = xs[j].clone()
                    xj.reshape(-1)[c] += sign * h
                    args = list(xs)
                    args[j] = xj
                    try:
                        torch.set_rng_state(bwd.state)
                        with torch.no_grad():
                            out = s.flat(*args)[k].detach().reshape(-1)
                    except _FAILS:
                        return "unknown", small
                    a, b = base[out_rows], out[out_rows]
                    # a change beyond the rounding of the outputs themselves
                    if bool(((b - a).abs() > 8 * eps * (a.abs() + b.abs())).any()):
                        changed = True
                moved.append(changed)
            if any(moved[-FLAT_SMALL:]):
                kinds.add("not flat")
            elif any(moved):
                kinds.add("flat")
            else:
                kinds.add("independent")
        if not kinds:
            return "unknown", small
        for kind in ("not flat", "independent", "flat"):  # the least meant-looking wins
            if kind in kinds:
                return kind, small
        return "unknown", small

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
                    tol_t = entry_tolerance(ref_t, err_t, self.bwd.rtol, self.bwd.floor)
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
