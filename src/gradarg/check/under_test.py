"""The backward under test: its VJPs, and rows or columns of the Jacobian it implies.

Every number here comes from ``torch.autograd.grad`` on the recorded forward pass (the backward
the user wrote), batched with ``is_grads_batched`` where torch can, row by row otherwise.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import torch

if TYPE_CHECKING:
    from .references import Reference
    from .setup import Setup

__all__ = ["BLOCK_ENTRIES", "CHUNK_ENTRIES", "MAX_COLUMNS", "MIN_COLUMNS", "BackwardUnderTest"]

# Bounded localisation of a wrong pair: at most this many Jacobian entries compared per pair
# (sampled columns × all rows), at least MIN_COLUMNS columns, at most MAX_COLUMNS.
BLOCK_ENTRIES = 1 << 19
MIN_COLUMNS, MAX_COLUMNS = 16, 512
CHUNK_ENTRIES = 1 << 21  # entries per batched backward pass (rows × input size)


class BackwardUnderTest:
    """What :class:`~gradarg.check.checker.Checker` asks of the backward (the base of its
    mixins: the state a run keeps is declared here, set in ``Checker.__init__``)."""

    s: Setup
    leaves: tuple[torch.Tensor, ...]
    outs: tuple[torch.Tensor, ...]
    keep: list[int]
    out_names: list[str]
    rtol: float
    dtype: torch.dtype
    gen: torch.Generator
    state: torch.Tensor
    ref: Reference
    reference: str
    intended: Any
    notes: list[str]
    affine: dict[str, bool]
    cost_text: str
    forward_rounding: float = 0.0  # the forward's relative rounding (low-precision inputs)
    twin: Any = None  # the function recorded on float64 copies, for measured rounding
    _how_sampled: dict  # (k, j) -> "screened" when group tests chose the compared elements

    def _random_vs(self) -> dict[int, torch.Tensor]:
        """Random upstream gradients, one per checked output (from the check's generator)."""
        return {k: torch.randn(self.outs[k].shape, generator=self.gen,
                               dtype=self.outs[k].dtype) for k in self.keep}


    def backward(self, vs: dict[int, torch.Tensor]) -> tuple[list[torch.Tensor], list[bool]]:
        """Gradients for every input given upstream gradients for some outputs (cloned)."""
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


    def _chunk(self, width: int) -> int:
        return max(1, CHUNK_ENTRIES // max(width, 1))

    def got_rows(self, k: int, j: int, rows: torch.Tensor) -> torch.Tensor:
        """Rows ``rows`` of block (k, j) of the backward's Jacobian, ``len(rows) × n_j``."""
        y, x = self.outs[k], self.leaves[j]
        m, n = y.numel(), x.numel()
        if not y.requires_grad:
            return torch.zeros(rows.numel(), n, dtype=torch.float64)
        out = []
        step = self._chunk(max(m, n))
        for start in range(0, rows.numel(), step):
            idx = rows[start:start + step]
            basis = torch.zeros(idx.numel(), m, dtype=y.dtype)
            basis[torch.arange(idx.numel()), idx] = 1
            basis = basis.reshape(idx.numel(), *y.shape)
            torch.set_rng_state(self.state)
            try:
                with torch.enable_grad():
                    (g,) = torch.autograd.grad(y, x, basis, retain_graph=True,
                                               allow_unused=True, is_grads_batched=True)
                g = torch.zeros(idx.numel(), n, dtype=torch.float64) if g is None else g
            except RuntimeError:
                g = torch.stack([self.backward({k: b})[0][j] for b in basis])
            out.append(g.detach().reshape(idx.numel(), n).double())
        return torch.cat(out)

    def got_columns(self, k: int, j: int, cols: torch.Tensor | None,
                    dirs: torch.Tensor | None = None):
        """Columns ``cols`` of block (k, j) of the backward's Jacobian: ``(rows, m × c)``;
        with ``dirs`` (``c × n_j``) instead, the products ``J u`` for each row ``u`` of it.

        The backward ``g(v)`` is linear in ``v`` (plus ``g(0)`` when it adds a term that does
        not depend on ``v``), so column ``c`` is ``∂g_c/∂v + g(0)_c``: one backward pass
        through the backward per column.  When the backward cannot be differentiated
        (``once_differentiable``, in-place writes), every row instead (``rows`` is ``None``),
        or a sample of rows when there are too many.
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
            out = [] if g.requires_grad else [torch.zeros(c, m, dtype=torch.float64)]
            step = self._chunk(max(m, n))
            for start in range(0, c if g.requires_grad else 0, step):
                basis = block(start, min(c, start + step)).to(g.dtype).reshape(-1, *x.shape)
                b_n = basis.shape[0]
                try:
                    (d,) = torch.autograd.grad(g, v, basis, retain_graph=True,
                                               allow_unused=True, is_grads_batched=True)
                except RuntimeError:
                    d = torch.stack([_or_zeros(torch.autograd.grad(
                        g, v, b, retain_graph=True, allow_unused=True)[0], v) for b in basis])
                if d is None:
                    d = torch.zeros(b_n, m, dtype=torch.float64)
                out.append(d.detach().reshape(b_n, m).double())
            res = torch.cat(out).T
            # trust the derivative only if it reproduces one plain backward pass: a backward
            # marked once_differentiable, or one not linear in v, fails this
            vr = torch.randn(y.shape, generator=self.gen, dtype=torch.float64).to(y.dtype)
            g0 = g.detach().reshape(1, -1).double()
            gv = self.backward({k: vr})[0][j].reshape(1, -1).double()
            lhs = apply(gv - g0)[0]
            rhs = vr.reshape(-1).double() @ res
            scale = float((vr.reshape(-1).double().abs() @ res.abs()).max()) + float(
                lhs.abs().max()) if res.numel() else 0.0
            if res.numel() and float((lhs - rhs).abs().max()) > 10 * self.rtol * scale + 1e-300:
                raise RuntimeError("the derivative of the backward does not match it")
            return None, res + off
        except RuntimeError:
            pass
        rows_needed = min(m, max(MIN_COLUMNS, BLOCK_ENTRIES // max(c, 1)))
        rows = None if rows_needed == m else (
            torch.randperm(m, generator=self.gen)[:rows_needed].sort().values)
        idx = torch.arange(m) if rows is None else rows
        out = []
        step = self._chunk(max(m, n))
        for start in range(0, idx.numel(), step):
            out.append(apply(self.got_rows(k, j, idx[start:start + step])))
        return rows, torch.cat(out)


def _or_zeros(g: torch.Tensor | None, like: torch.Tensor) -> torch.Tensor:
    return torch.zeros_like(like) if g is None else g
