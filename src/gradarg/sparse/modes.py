"""The sparse modes: how a compressed Jacobian or Hessian is seeded, computed and read back.

A mode is an object that knows, for one colouring of a pattern, the three things a compressed
derivative needs, for the eager call and the compiled call alike:

* its **seeds**: one row per pass, the sum of the one-hots of a colour (:meth:`Mode.seeds`,
  kept per dtype);
* its **compressed pass**: :meth:`run` (the eager call) and :meth:`pure` (a pure function of
  ``x`` and the seeds, which :class:`~gradarg.sparse.CompiledSparse` hands to
  ``torch.compile``), both through :mod:`gradarg.sparse.passes`;
* its **recovery**: :meth:`recover`, the pattern's entries from the flat result of the pass.

Jacobian modes (:class:`~gradarg.SparseJacobian` chooses one, and times the ties when
compiled): :class:`Reverse` (one VJP per row colour), :class:`Forward` (one JVP per column
colour), :class:`Bidirectional` (the dense rows by VJPs, the other entries by JVPs).  Hessian
modes (:class:`~gradarg.SparseHessian`, one Hessian-vector product per colour): :class:`Star`
(direct recovery) and :class:`Acyclic` (substitution); each also names its colouring.

A new mode is a class here, with its name in :data:`JACOBIAN_MODES` or :data:`HESSIAN_MODES`;
a Jacobian mode also needs its colouring in ``SparseJacobian``'s choice
(:mod:`gradarg.sparse.compressed`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING, ClassVar, NamedTuple, Protocol

import numpy as np
import torch
from torch.func import vmap

from ._layouts import check_y, colour_seeds
from .acyclic import acyclic_coloring, substitution_plan
from .passes import hvp, hvps, jvps, jvps_pure, vjps, vjps_pure
from .star import star_coloring, star_recovery

if TYPE_CHECKING:
    from .bidirectional import Partition
    from .pattern import Coordinates

__all__ = [
    "HESSIAN_MODES",
    "JACOBIAN_MODES",
    "Acyclic",
    "Bidirectional",
    "Forward",
    "HessianMode",
    "JacobianMode",
    "Mode",
    "Pass",
    "Reverse",
    "Star",
    "record",
]

Fn = Callable[[torch.Tensor], torch.Tensor]


class Mode(Protocol):
    """What :class:`~gradarg.sparse.CompiledSparse` needs of a mode."""

    passes: int

    @property
    def name(self) -> str: ...

    def seeds(self, dtype: torch.dtype) -> tuple[torch.Tensor, ...]: ...

    def pure(self, fn: Fn) -> Callable[..., torch.Tensor]: ...

    def recover(self, flat: torch.Tensor) -> torch.Tensor: ...


class Pass(NamedTuple):
    """An eager Jacobian pass: the flat compressed result, ``y = fn(x)`` and the leaf it was
    recorded from (every mode records ``fn``'s graph, which the certificate reuses)."""

    flat: torch.Tensor
    y: torch.Tensor
    leaf: torch.Tensor


def record(fn: Fn, x0: torch.Tensor, co: Coordinates) -> tuple[torch.Tensor, torch.Tensor]:
    """``(y, leaf)``: ``fn`` run on ``x0`` made a leaf that requires grad (in place: ``x0`` is
    the caller's copy), its graph recorded, ``y`` checked against the pattern."""
    leaf = x0.requires_grad_(True)
    with torch.enable_grad():
        y = check_y(fn(leaf), co.m, co.y_shape)
    return y, leaf


class _Seeded:
    """Seeds made once per dtype (``x``'s: a pass casts them to ``y``'s where it needs).

    By default one seed per colour of :attr:`colors` (one colour per line: a row, a column
    or an input element), the sum of the one-hots of its lines."""

    colors: torch.Tensor | None

    def __init__(self) -> None:
        self._seeds: dict[torch.dtype, tuple[torch.Tensor, ...]] = {}

    def seeds(self, dtype: torch.dtype) -> tuple[torch.Tensor, ...]:
        """The seeds, one row per pass, in ``dtype``."""
        if dtype not in self._seeds:
            self._seeds[dtype] = self._make(dtype)
        return self._seeds[dtype]

    def _make(self, dtype: torch.dtype) -> tuple[torch.Tensor, ...]:
        assert self.colors is not None
        return (colour_seeds(self.colors, self.colors.numel(), dtype),)


# --------------------------------------------------------------------------- Jacobian modes


class JacobianMode(_Seeded):
    """A way to compute a compressed Jacobian of the pattern ``co`` (entries ``rows``,
    ``cols``); :attr:`gather` says where each entry sits in the flat compressed result."""

    name: ClassVar[str]
    forward_mode: ClassVar[bool]  # has column (JVP) passes
    colors: torch.Tensor | None = None  # one colour per row / column; None for a split
    passes: int

    def __init__(self, co: Coordinates, rows: torch.Tensor, cols: torch.Tensor) -> None:
        super().__init__()
        self.co, self.rows, self.cols = co, rows, cols

    @cached_property
    def gather(self) -> torch.Tensor:
        """Entry ``e`` of the pattern sits at flat position ``gather[e]`` of the pass's result."""
        raise NotImplementedError

    def recover(self, flat: torch.Tensor) -> torch.Tensor:
        return flat.index_select(0, self.gather)

    def prepare(self) -> None:
        """The one-off work of a first call (the decompression), done now: at construction."""
        _ = self.gather

    def run(self, fn: Fn, x0: torch.Tensor) -> Pass:
        """The eager compressed pass at ``x0`` (the caller's copy of ``x``)."""
        raise NotImplementedError

    def pure(self, fn: Fn) -> Callable[..., torch.Tensor]:
        """The compressed pass as a pure function of ``(x, *seeds)``, for ``torch.compile``."""
        raise NotImplementedError


class _Side(JacobianMode):
    """One side of the pattern coloured, ``colors`` one colour per row (VJPs) or per column
    (JVPs)."""

    colors: torch.Tensor

    def __init__(self, co: Coordinates, rows: torch.Tensor, cols: torch.Tensor,
                 colors: torch.Tensor) -> None:
        super().__init__(co, rows, cols)
        self.colors = colors
        self.passes = _count(colors)


class Reverse(_Side):
    """One VJP per row colour ``c``, upstream gradient ``v_c = Σ_{colour(i)=c} e_i``; entry
    ``(i, j)`` is ``(v_{colour(i)}ᵀ J)_j``.  The result is in ``x``'s dtype."""

    name = "reverse"
    forward_mode = False

    @cached_property
    def gather(self) -> torch.Tensor:
        return _flat(self.colors, self.co.rows, self.co.n, self.co.cols)

    def run(self, fn: Fn, x0: torch.Tensor) -> Pass:
        y, leaf = record(fn, x0, self.co)
        (v,) = self.seeds(x0.dtype)
        return Pass(vjps(y, leaf, v.view(self.passes, *y.shape).to(y.dtype)).reshape(-1), y,
                    leaf)

    def pure(self, fn: Fn) -> Callable[..., torch.Tensor]:
        def pure(x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
            return vjps_pure(fn, x.clone(), v)  # fn never reaches the caller's tensor

        return pure


class Forward(_Side):
    """One JVP per column colour ``c``, tangent ``t_c = Σ_{colour(j)=c} e_j``; entry
    ``(i, j)`` is ``(J t_{colour(j)})_i``.  The result is in ``y``'s dtype."""

    name = "forward"
    forward_mode = True

    @cached_property
    def gather(self) -> torch.Tensor:
        return _flat(self.colors, self.co.cols, self.co.m, self.co.rows)

    def run(self, fn: Fn, x0: torch.Tensor) -> Pass:
        y, leaf = record(fn, x0, self.co)
        (t,) = self.seeds(x0.dtype)
        cols = jvps(fn, y, leaf, t.view(self.passes, *x0.shape))
        return Pass(cols.detach().reshape(-1), y, leaf)

    def pure(self, fn: Fn) -> Callable[..., torch.Tensor]:
        def pure(x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
            return jvps_pure(fn, x.clone(), t)  # fn never reaches the caller's tensor

        return pure


class Bidirectional(JacobianMode):
    """The entries ``split.reverse`` by one VJP per colour of their rows, the others by one
    JVP per colour of their columns (:func:`gradarg.sparse.bidirectional.
    bidirectional_partition`); the VJPs' results first, then the JVPs', in ``y``'s dtype."""

    name = "bidirectional"
    forward_mode = True

    def __init__(self, co: Coordinates, rows: torch.Tensor, cols: torch.Tensor,
                 split: Partition) -> None:
        super().__init__(co, rows, cols)
        self.split = split
        self.passes = split.passes

    @cached_property
    def _colours(self) -> tuple[torch.Tensor, torch.Tensor]:
        return (torch.from_numpy(self.split.row_colors),
                torch.from_numpy(self.split.column_colors))

    @cached_property
    def _lines(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The rows with a reverse entry, the columns with a forward one."""
        rev = torch.from_numpy(self.split.reverse)
        return torch.unique(self.rows[rev]), torch.unique(self.cols[~rev])

    def prepare(self) -> None:
        super().prepare()
        _ = self._lines

    def _make(self, dtype: torch.dtype) -> tuple[torch.Tensor, ...]:
        """``v`` (reverse colours × m) and ``t`` (forward colours × n): one-hots of the rows
        with a reverse entry, the columns with a forward one."""
        sp, co = self.split, self.co
        rc, cc = self._colours
        rev_lines, fwd_lines = self._lines
        v = torch.zeros(sp.reverse_passes, co.m, dtype=dtype)
        v[rc[rev_lines], rev_lines] = 1
        t = torch.zeros(sp.forward_passes, co.n, dtype=dtype)
        t[cc[fwd_lines], fwd_lines] = 1
        return v, t

    @cached_property
    def gather(self) -> torch.Tensor:
        co, rows, cols = self.co, self.rows, self.cols
        rc, cc = self._colours
        return torch.where(
            torch.from_numpy(self.split.reverse),
            rc[rows] * co.n + cols,
            self.split.reverse_passes * co.n + cc[cols] * co.m + rows,
        )

    def run(self, fn: Fn, x0: torch.Tensor) -> Pass:
        y, leaf = record(fn, x0, self.co)
        v, t = self.seeds(x0.dtype)
        parts = [vjps(y, leaf, v.view(-1, *y.shape).to(y.dtype)).reshape(-1).to(y.dtype)]
        if self.split.forward_passes:
            cols = jvps(fn, y, leaf, t.view(-1, *x0.shape))
            parts.append(cols.detach().reshape(-1).to(y.dtype))
        return Pass(torch.cat(parts), y, leaf)

    def pure(self, fn: Fn) -> Callable[..., torch.Tensor]:
        forward = bool(self.split.forward_passes)

        def pure(x: torch.Tensor, v: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
            x = x.clone()  # fn never reaches the caller's tensor
            parts = [vjps_pure(fn, x, v)]
            if forward:
                parts.append(jvps_pure(fn, x, t).to(parts[0].dtype))
            return torch.cat(parts)

        return pure


JACOBIAN_MODES: dict[str, type[JacobianMode]] = {
    mode.name: mode for mode in (Reverse, Forward, Bidirectional)
}


def _count(colors: torch.Tensor) -> int:
    # in NumPy, as _flat: a torch reduction's or index's first call in a process costs
    # 0.2-0.9 ms (dispatch set-up), NumPy's tens of microseconds
    return int(colors.numpy().max()) + 1 if colors.numel() else 0


def _flat(colors: torch.Tensor, lines: np.ndarray, size: int, others: np.ndarray
          ) -> torch.Tensor:
    """``colors[lines] * size + others``: where each entry sits in the flat result."""
    return torch.from_numpy(colors.numpy()[lines] * size + others)


# --------------------------------------------------------------------------- Hessian modes


class HessianMode(_Seeded):
    """A colouring of the symmetrised pattern (entries ``rows``, ``cols``, row-major) and the
    recovery it allows; the pass is the same for every Hessian mode: one Hessian-vector
    product ``H s_c`` per colour (:func:`gradarg.sparse.passes.hvp`)."""

    name: ClassVar[str]

    def __init__(self, rows: np.ndarray, cols: np.ndarray, colors: np.ndarray) -> None:
        super().__init__()
        self.colors = torch.from_numpy(colors)
        self.passes = int(colors.max()) + 1

    @staticmethod
    def colour(indptr: np.ndarray, indices: np.ndarray, sequence: np.ndarray) -> np.ndarray:
        """The greedy colouring of the adjacency ``(indptr, indices)`` in vertex order
        ``sequence`` that this mode's recovery needs."""
        raise NotImplementedError

    def run(self, f: Fn, x0: torch.Tensor) -> torch.Tensor:
        """The eager products at ``x0``, flat ``passes × n``."""
        (seeds,) = self.seeds(x0.dtype)
        return hvps(f, x0, seeds).detach().reshape(-1)

    def pure(self, f: Fn) -> Callable[..., torch.Tensor]:
        def pure(x: torch.Tensor, seeds: torch.Tensor) -> torch.Tensor:
            x = x.clone()  # f never reaches the caller's tensor
            return vmap(hvp(f, x))(seeds).reshape(-1)

        return pure

    def recover(self, flat: torch.Tensor) -> torch.Tensor:
        """The entries' values from the flat ``passes × n`` products."""
        raise NotImplementedError


class Star(HessianMode):
    """Star colouring, every entry read directly off one product
    (:func:`gradarg.sparse.star.star_recovery`)."""

    name = "star"

    @staticmethod
    def colour(indptr: np.ndarray, indices: np.ndarray, sequence: np.ndarray) -> np.ndarray:
        colors = star_coloring(indptr, indices, sequence)
        assert colors is not None  # no limit: never stopped
        return colors

    def __init__(self, rows: np.ndarray, cols: np.ndarray, colors: np.ndarray) -> None:
        super().__init__(rows, cols, colors)
        self._gather = torch.from_numpy(star_recovery(rows, cols, colors))

    def recover(self, flat: torch.Tensor) -> torch.Tensor:
        return flat.index_select(0, self._gather)  # 4x faster than flat[...]


class Acyclic(HessianMode):
    """Acyclic colouring, entries by substitution: differences of one signed prefix sum,
    accumulated in float64 (:class:`gradarg.sparse.acyclic.SubstitutionPlan`); the same few
    torch operations whatever the trees' depth."""

    name = "acyclic"
    colour = staticmethod(acyclic_coloring)

    def __init__(self, rows: np.ndarray, cols: np.ndarray, colors: np.ndarray) -> None:
        super().__init__(rows, cols, colors)
        plan = substitution_plan(rows, cols, colors)
        self._order, self._sign = torch.from_numpy(plan.order), torch.from_numpy(plan.sign)
        self._plus, self._minus = torch.from_numpy(plan.plus), torch.from_numpy(plan.minus)

    def recover(self, flat: torch.Tensor) -> torch.Tensor:
        w = flat.index_select(0, self._order).to(torch.float64) * self._sign
        prefix = torch.cat([w.new_zeros(1), torch.cumsum(w, 0)])  # functional: compilable
        return (prefix.index_select(0, self._plus)
                - prefix.index_select(0, self._minus)).to(flat.dtype)


HESSIAN_MODES: dict[str, type[HessianMode]] = {mode.name: mode for mode in (Star, Acyclic)}
