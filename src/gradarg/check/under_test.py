"""The backward under test: its VJPs, and rows or columns of the Jacobian it implies.

:class:`BackwardUnderTest` records the forward pass once (its floating outputs only) and answers
everything a check asks of the backward the user wrote: gradients for upstream gradients
(:meth:`~BackwardUnderTest.backward`), the same run in float64 on a recorded twin
(:meth:`~BackwardUnderTest.backward64`, for the rounding it shows), and rows or columns of the
Jacobian it implies (:meth:`~BackwardUnderTest.rows`, :meth:`~BackwardUnderTest.columns`).
Every number comes from ``torch.autograd.grad`` on the recorded forward pass, batched with
``is_grads_batched`` where torch can, row by row otherwise.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import torch

from .budget import NAN_ROW_ENTRIES, PATCH_NONZEROS, chunk, fallback_rows
from .setup import Setup
from .tolerance import loose_tolerance, same_function, shifted_inputs

__all__ = ["BackwardUnderTest", "one_hot_rows"]


class BackwardUnderTest:
    """The backward of ``setup.flat`` at ``setup.xs``, recorded once.

    Parameters
    ----------
    setup : Setup
        The function and the checked inputs.
    gen : torch.Generator
        The check's generator: random upstream gradients and samples of rows.
    rtol : float
        The rounding allowance of the check (:mod:`.tolerance`).
    twin : bool
        Also record the function on float64 copies of low-precision inputs, so the rounding of
        the backward can be measured (:meth:`backward64`).

    Raises
    ------
    TypeError
        ``fn`` returned no floating-point tensor.

    Attributes
    ----------
    s : Setup
        The setup with ``flat`` returning the floating outputs only.
    outs, out_names, dropped_outputs
        The recorded floating outputs, their names (``"y"``, ``"y[1]"``), and the outputs left
        out with the reason.
    state : torch.Tensor
        The CPU random state before the forward pass; every later evaluation replays it.
    forward_rounding : float
        The forward's relative rounding measured on the twin (at least the dtype's eps), else 0.
    floor : float
        The smallest normal number of the least precise floating dtype among the inputs and
        outputs: the least a tolerance is (:func:`~.tolerance.entry_tolerance`).
    """

    def __init__(self, setup: Setup, gen: torch.Generator, rtol: float, *, twin: bool) -> None:
        self.gen = gen
        self.rtol = rtol
        self.state = torch.get_rng_state()
        leaves = tuple(x.clone().requires_grad_(True) for x in setup.xs)
        with torch.enable_grad():
            raw = setup.flat(*leaves)
        names = ["y"] if len(raw) == 1 else [f"y[{k}]" for k in range(len(raw))]
        floating = [k for k, y in enumerate(raw)
                    if isinstance(y, torch.Tensor) and y.is_floating_point()]
        self.dropped_outputs = [
            f"{names[k]} ({getattr(y, 'dtype', type(y).__name__)}): not a floating output"
            for k, y in enumerate(raw) if k not in floating]
        if not floating:
            raise TypeError("fn returned no floating-point tensor: nothing to differentiate")
        self.s = setup.outputs(floating)
        self.leaves, self.outs = leaves, tuple(raw[k] for k in floating)
        # the smallest normal number of the least precise dtype met: below it a value is
        # subnormal, with fewer significant bits than eps says (exp(-100) in float32 holds
        # five), so differences smaller than it are rounding, never a verdict
        self.floor = max(torch.finfo(t.dtype).tiny for t in (*leaves, *self.outs)
                         if t.is_floating_point() or t.is_complex())
        self.out_names = [names[k] for k in floating]
        self.dtype = setup.xs[0].dtype
        self.forward_rounding = 0.0
        self.twin = self._twin() if twin else None
        self._patched: dict[tuple[int, int], tuple[torch.Tensor, torch.Tensor]] = {}

    # -------------------------------------------------------------- rounding, measured

    def _twin(self):
        """The same function on float64 copies of the inputs, recorded for autograd: its
        backward is the backward under test run in float64, so ``g - g64`` is the rounding the
        backward under test shows in its own dtype.  ``None`` for float64 inputs, when ``fn``
        refuses float64 copies, or when its float64 outputs are not its outputs rounded (random
        draws that differ between the dtypes).  Sets :attr:`forward_rounding`."""
        if all(x.dtype == torch.float64 for x in self.s.xs):
            return None
        try:
            leaves = tuple(x.detach().double().requires_grad_(True) for x in self.s.xs)
            torch.set_rng_state(self.state)
            with torch.enable_grad():
                outs = self.s.flat(*leaves)
        except (RuntimeError, TypeError, ValueError):
            return None
        rho = 0.0
        moves: list[float] | None = None
        for k, y in enumerate(self.outs):
            y64 = outs[k]
            if y64.dtype != torch.float64 or y64.shape != y.shape:
                return None
            if not y64.requires_grad:
                continue
            scale = float(y64.detach().norm())
            d = float((y.detach().double() - y64.detach()).norm())
            if not same_function(d, scale):
                # the same function all the same when its float64 outputs move as much with
                # the inputs shifted by one rounding step (an ill-conditioned forward); that
                # rounding is the inputs' conditioning, which the per-entry allowance of the
                # checker measures, so it does not loosen the forward's precision ``rho``
                moves = self._forward_moves(outs) if moves is None else moves
                if not same_function(d, scale, moves[k]):  # other draws, or NaN
                    return None
                continue
            rho = max(rho, d / scale if scale > 0 else 0.0)
        eps = torch.finfo(self.dtype).eps
        # the precision a backward in this dtype may have: its dtype's, or the forward's
        self.forward_rounding = max(eps, rho)
        return leaves, outs

    def _forward_moves(self, outs) -> list[float]:
        """Per output, the largest ``‖y64(x') - y64(x)‖`` over the two shifts of the inputs by
        one rounding step of their dtype (:func:`.tolerance.shifted_inputs`), ``fn``'s draws
        replayed; 0 where a shifted run fails.  The generator is left as it was."""
        after = torch.get_rng_state()
        out = [0.0] * len(outs)
        for xs in shifted_inputs(self.s.xs, self.dtype):
            torch.set_rng_state(self.state)
            try:
                with torch.no_grad():
                    moved = self.s.flat(*xs)
            except (RuntimeError, TypeError, ValueError):
                continue
            for k, (a, b) in enumerate(zip(moved, outs, strict=True)):
                if isinstance(a, torch.Tensor) and a.shape == b.shape:
                    out[k] = max(out[k], float((a.double() - b.detach().double()).norm()))
        torch.set_rng_state(after)
        return out

    def backward64(self, vs: dict[int, torch.Tensor]) -> list[torch.Tensor] | None:
        """The backward under test run in float64 (on the twin) for the same ``vs``."""
        if self.twin is None:
            return None
        leaves, outs = self.twin
        live = [k for k in vs if outs[k].requires_grad]
        if not live:
            return [torch.zeros_like(x) for x in leaves]
        try:
            with torch.enable_grad():
                grads = torch.autograd.grad([outs[k] for k in live], leaves,
                                            [vs[k].detach().double() for k in live],
                                            retain_graph=True, allow_unused=True)
        except RuntimeError:
            return None
        return [torch.zeros_like(x) if g is None else g.detach()
                for g, x in zip(grads, leaves, strict=True)]

    def rows64(self, k: int, j: int) -> torch.Tensor | None:
        """Block ``(k, j)`` of the Jacobian the backward under test implies when run in
        float64 on the twin (``m × n``, one one-hot backward pass per row); ``None`` without
        a twin or when that backward fails."""
        if self.twin is None:
            return None
        leaves, outs = self.twin
        y, x = outs[k], leaves[j]
        m, n = y.numel(), x.numel()
        out = torch.zeros(m, n, dtype=torch.float64)
        if not y.requires_grad:
            return out
        step = chunk(max(m, n))

        def one(b: torch.Tensor) -> torch.Tensor:
            return _or_zeros(torch.autograd.grad(y, x, b, retain_graph=True,
                                                 allow_unused=True)[0], x)

        try:
            for start in range(0, m, step):
                idx = torch.arange(start, min(m, start + step))
                g = one_hot_rows(y, x, idx, torch.float64, self.state, one)
                if g is not None:
                    out[idx] = g
        except RuntimeError:
            return None
        return out

    # -------------------------------------------------------------- passes

    def random_vs(self) -> dict[int, torch.Tensor]:
        """Random upstream gradients, one per output (from the check's generator)."""
        return {k: torch.randn(y.shape, generator=self.gen, dtype=y.dtype)
                for k, y in enumerate(self.outs)}

    def backward(self, vs: dict[int, torch.Tensor]) -> tuple[list[torch.Tensor], list[bool]]:
        """Gradients for every input given upstream gradients for some outputs (cloned), and
        for each input whether the backward returned ``None`` for it."""
        live = [k for k in vs if self.outs[k].requires_grad]
        if not live:
            return [torch.zeros_like(x) for x in self.leaves], [True] * len(self.leaves)
        with torch.enable_grad():
            grads = torch.autograd.grad(
                [self.outs[k] for k in live], self.leaves,
                [vs[k].detach().clone() for k in live], retain_graph=True, allow_unused=True)
        none = [g is None for g in grads]
        return [torch.zeros_like(x) if g is None else g.detach()
                for g, x in zip(grads, self.leaves, strict=True)], none

    def rows(self, k: int, j: int, rows: torch.Tensor,
             cols: torch.Tensor | None = None) -> torch.Tensor:
        """Rows ``rows`` of block (k, j) of the backward's Jacobian, ``len(rows) × n_j``
        (only the columns ``cols`` when given: ``len(rows) × len(cols)``, never all of the
        rows' entries at once)."""
        y, x = self.outs[k], self.leaves[j]
        m, n = y.numel(), x.numel()
        out = torch.zeros(rows.numel(), n if cols is None else cols.numel(),
                          dtype=torch.float64)
        if not y.requires_grad:
            return out
        step = chunk(max(m, n))
        for start in range(0, rows.numel(), step):
            idx = rows[start:start + step]
            g = one_hot_rows(y, x, idx, y.dtype, self.state,
                             lambda b: self.backward({k: b})[0][j])
            if g is not None:  # filled in place: no list of large pieces held at once
                out[start:start + idx.numel()] = g if cols is None else g[:, cols]
        return out

    def columns(self, k: int, j: int, cols: torch.Tensor | None,
                dirs: torch.Tensor | None = None, rows: torch.Tensor | None = None):
        """Columns ``cols`` of block (k, j) of the backward's Jacobian: ``(rows, m × c)``;
        with ``dirs`` (``c × n_j``) instead, the products ``J u`` for each row ``u`` of it.

        The backward ``g(v)`` is linear in ``v`` (plus ``g(0)`` when it adds a term that does
        not depend on ``v``), so column ``c`` is ``∂g_c/∂v + g(0)_c``: one backward pass
        through the backward per column.  Rows where that derivative is not finite although
        the backward is (a division masked by ``torch.where``: its derivative is ``0/0``)
        come from one-hot backward passes instead.  When the backward cannot be
        differentiated (``once_differentiable``, in-place writes, a cast to a lower
        precision that rounds differently in the two), the columns come from one-hot
        backward passes: every row, or ``rows`` when given, or a sample of rows
        (:func:`.budget.fallback_rows`) when there are too many (then ``rows`` is returned).
        """
        y, x = self.outs[k], self.leaves[j]
        m, n = y.numel(), x.numel()
        assert cols is not None or dirs is not None
        c = cast(torch.Tensor, cols).numel() if dirs is None else dirs.shape[0]

        def block(start: int, stop: int) -> torch.Tensor:  # one-hot rows built per chunk
            if dirs is not None:
                return dirs[start:stop]
            b = torch.zeros(stop - start, n, dtype=x.dtype)
            b[torch.arange(stop - start), cast(torch.Tensor, cols)[start:stop]] = 1
            return b

        def apply(rows_of_j: torch.Tensor) -> torch.Tensor:  # (r × n) -> (r × c)
            if rows_of_j.is_sparse:
                if dirs is None:
                    return rows_of_j.index_select(1, cast(torch.Tensor, cols)).to_dense()
                return torch.sparse.mm(rows_of_j, dirs.double().T)
            if dirs is None:
                return rows_of_j[:, cols]
            return rows_of_j @ dirs.double().T

        if not y.requires_grad:
            return None, torch.zeros(m, c, dtype=torch.float64)
        try:
            v = torch.zeros_like(y).detach().requires_grad_(True)
            torch.set_rng_state(self.state)
            with torch.enable_grad():
                (g,) = torch.autograd.grad(y, x, v, retain_graph=True, create_graph=True,
                                           allow_unused=True)
            if g is None:
                return None, torch.zeros(m, c, dtype=torch.float64)
            off = apply(g.detach().reshape(1, -1).double())[0]
            res = torch.zeros(m, c, dtype=torch.float64)
            step = chunk(max(m, n))
            for start in range(0, c if g.requires_grad else 0, step):
                stop = min(c, start + step)
                basis = block(start, stop).to(g.dtype).reshape(-1, *x.shape)
                b_n = basis.shape[0]
                try:
                    (d,) = torch.autograd.grad(g, v, basis, retain_graph=True,
                                               allow_unused=True, is_grads_batched=True)
                except RuntimeError:
                    d = torch.stack([_or_zeros(torch.autograd.grad(
                        g, v, b, retain_graph=True, allow_unused=True)[0], v) for b in basis])
                if d is not None:
                    res[:, start:stop] = d.detach().reshape(b_n, m).T
            # trust the derivative only if it reproduces one plain backward pass: a backward
            # marked once_differentiable, or one not linear in v, fails this
            vr = torch.randn(y.shape, generator=self.gen, dtype=torch.float64).to(y.dtype)
            g0 = g.detach().reshape(1, -1).double()
            gv = self.backward({k: vr})[0][j].reshape(1, -1).double()
            lhs = apply(gv - g0)[0]
            bad = ~torch.isfinite(res).all(1)
            if bool(bad.any()):
                # a derivative that is not finite where the backward is: those rows from
                # one-hot passes, when they are few enough
                if not bool(torch.isfinite(lhs).all()) or int(bad.sum()) > fallback_rows(
                        m, c, n, NAN_ROW_ENTRIES):
                    raise RuntimeError("the derivative of the backward is not finite")
                idx = bad.nonzero().reshape(-1)
                res[idx] = self._patch(k, j, idx, apply) - off
            rhs = vr.reshape(-1).double() @ res
            scale = float((vr.reshape(-1).double().abs() @ res.abs()).max()) + float(
                lhs.abs().max()) if res.numel() else 0.0
            if res.numel() and not float((lhs - rhs).abs().max()) <= loose_tolerance(
                    scale, self.rtol):
                raise RuntimeError("the derivative of the backward does not match it")
            return None, res + off
        except RuntimeError:
            pass
        if rows is None:
            needed = fallback_rows(m, c, n)
            rows = None if needed == m else (
                torch.randperm(m, generator=self.gen)[:needed].sort().values)
        idx = torch.arange(m) if rows is None else rows
        res = torch.empty(idx.numel(), c, dtype=torch.float64)
        step = chunk(max(m, n))
        for start in range(0, idx.numel(), step):
            res[start:start + step] = apply(self.rows(k, j, idx[start:start + step]))
        return rows, res


    def _patch(self, k: int, j: int, idx: torch.Tensor, apply) -> torch.Tensor:
        """``apply`` of rows ``idx`` of block (k, j), from one-hot passes.  The rows are kept
        (sparse, when they have at most ``PATCH_NONZEROS`` nonzeros) for the next call with
        the same rows: group tests ask for the same rows at every level."""
        kept = self._patched.get((k, j))
        if kept is not None and torch.equal(kept[0], idx):
            return apply(kept[1])
        step = chunk(max(self.outs[k].numel(), self.leaves[j].numel()))
        out, parts, nnz = [], [], 0
        for start in range(0, idx.numel(), step):
            dense = self.rows(k, j, idx[start:start + step])
            out.append(apply(dense))
            if nnz <= PATCH_NONZEROS:
                sp = dense.to_sparse()
                nnz += sp.values().numel()
                parts.append(sp)
        if nnz <= PATCH_NONZEROS:
            self._patched[(k, j)] = (idx, torch.cat(parts).coalesce())
        return torch.cat(out)


def one_hot_rows(y: torch.Tensor, x: torch.Tensor, idx: torch.Tensor, dtype: torch.dtype,
                 state: torch.Tensor, one_row: Callable[[torch.Tensor], torch.Tensor],
                 ) -> torch.Tensor | None:
    """Rows ``idx`` of the Jacobian of ``y`` with respect to ``x`` that the backward implies
    (``len(idx) × x.numel()``): one ``is_grads_batched`` backward pass with the one-hot upstream
    gradients (``dtype``), or ``one_row(b)`` per one-hot ``b`` where vmap cannot batch the
    backward; the RNG reset to ``state`` first (a backward that draws random numbers draws the
    same ones).  ``None`` when ``x`` does not take part."""
    basis = torch.zeros(idx.numel(), y.numel(), dtype=dtype)
    basis[torch.arange(idx.numel()), idx] = 1
    basis = basis.reshape(idx.numel(), *y.shape)
    torch.set_rng_state(state)
    g: torch.Tensor | None
    try:
        with torch.enable_grad():
            (g,) = torch.autograd.grad(y, x, basis, retain_graph=True, allow_unused=True,
                                       is_grads_batched=True)
    except RuntimeError:  # a backward vmap cannot batch: one pass per row
        g = torch.stack([one_row(b) for b in basis]) if idx.numel() else None
    return None if g is None else g.detach().reshape(idx.numel(), x.numel())


def _or_zeros(g: torch.Tensor | None, like: torch.Tensor) -> torch.Tensor:
    return torch.zeros_like(like) if g is None else g
