"""Sparsity patterns of Jacobians: validation into coordinates, and a finder from dense probes.

A pattern is a boolean tensor that is ``True`` wherever the Jacobian ``J[i..., j...]`` may be
non-zero.  Internally it becomes the sorted, flat coordinates ``(rows, cols)`` of its ``True``
entries in the ``m × n`` matrix (``m = y.numel()``, ``n = x.numel()``, both flattened
row-major as in :func:`gradarg.jacobian`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from .._validate import (
    check_callable,
    check_count,
    check_dense,
    check_generator,
    check_memory,
    check_shape,
)
from ..core.dense import jacobian

__all__ = ["Coordinates", "coordinates", "sorted_unique", "sparsity_pattern"]

_LAYOUTS = (torch.strided, torch.sparse_coo, torch.sparse_csr)


@dataclass(frozen=True)
class Coordinates:
    """The ``True`` entries of a pattern as flat ``m × n`` coordinates, sorted row-major."""

    rows: np.ndarray  # int64, shape (nnz,)
    cols: np.ndarray  # int64, shape (nnz,)
    m: int
    n: int
    y_shape: tuple[int, ...] | None  # None when the pattern was given flat, as (m, n)
    x_shape: tuple[int, ...] | None
    # arrays computed from the coordinates, kept for the next use on the same object
    # (gradarg.sparse.d2color.bipartite's transpose, per colouring path); never changed in place
    derived: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def nnz(self) -> int:
        return int(self.rows.size)


# Peak bytes of a compressed derivative's colouring, per row or column of the pattern and per
# entry (measured: SparseJacobian of a (1, 10⁷) and a (10⁷, 1) pattern with one entry,
# 52-55 bytes per row and column; a 3·10⁶ diagonal 63; SparseHessian of it 92 per 2n).
BYTES_PER_LINE = 64
BYTES_PER_ENTRY = 48

WHAT_INSTEAD = (
    "Instead: a pattern over fewer unknowns (the variables the function really takes), or "
    "Jacobian-vector products without a pattern (gradarg.backward_vjp, torch.func.jvp)"
)


def coordinates(pattern: Any, x_shape: tuple[int, ...] | torch.Size | None = None, *,
                what: str = "colouring the pattern", lines: int = 1) -> Coordinates:
    """Check ``pattern`` and return its ``True`` entries as flat coordinates.

    ``pattern`` has shape ``y.shape + x.shape`` (then ``x_shape`` says where ``x``'s dimensions
    start) or the flat shape ``(m, n)``.  Dense (``torch.strided``), COO or CSR layouts.
    Before anything of the pattern's size is allocated, the memory that ``what`` needs
    (about ``lines ·`` :data:`BYTES_PER_LINE` per row and column plus :data:`BYTES_PER_ENTRY`
    per entry) is compared with the memory available: ``MemoryError`` with the estimate.
    """
    if not isinstance(pattern, torch.Tensor):
        raise TypeError(
            f"pattern must be a torch.Tensor of dtype torch.bool (dense, sparse COO or CSR), "
            f"got {type(pattern).__name__}"
        )
    if pattern.dtype != torch.bool:
        raise TypeError(
            f"pattern must have dtype torch.bool (True where the Jacobian may be non-zero), got "
            f"{pattern.dtype}; for a numeric matrix A use A != 0"
        )
    if pattern.layout not in _LAYOUTS:
        raise TypeError(
            f"pattern layout must be torch.strided, torch.sparse_coo or torch.sparse_csr, got "
            f"{pattern.layout}"
        )
    if pattern.is_meta:
        raise ValueError(
            "pattern is on the meta device, which holds its shape but not which entries are "
            "True; build the pattern on the CPU"
        )
    shape = tuple(pattern.shape)
    if x_shape is None:
        if len(shape) != 2:
            raise ValueError(
                f"a pattern of shape {shape} needs x_shape (the input's shape) to know where the "
                f"input dimensions start; or give the flat pattern of shape (m, n)"
            )
        m, n = shape
        y_shape = x_s = None
    else:
        x_s = check_shape("x_shape", x_shape)
        n = math.prod(x_s)
        k = len(x_s)
        if len(shape) >= k and shape[len(shape) - k :] == x_s:
            y_shape = shape[: len(shape) - k]
            m = math.prod(y_shape)
        elif len(shape) == 2 and shape[1] == n:
            y_shape, m = None, shape[0]
        else:
            raise ValueError(
                f"pattern has shape {shape}; expected y.shape + x.shape, ending in x.shape = "
                f"{x_s}, or the flat shape (y.numel(), {n})"
            )
    if pattern.layout == torch.sparse_coo:
        entries = pattern._nnz()
    elif pattern.layout == torch.sparse_csr:
        entries = pattern.values().numel()
    else:  # its own m·n bytes are already allocated; its entries are counted after
        entries = 0
    check_memory(f"{what} (a pattern of {m} × {n}, {entries or 'its'} entries)",
                 lines * BYTES_PER_LINE * (m + n) + BYTES_PER_ENTRY * entries, WHAT_INSTEAD)
    split = len(shape) - (len(x_s) if y_shape is not None and x_s is not None else 1)
    rows, cols = _rows_cols(pattern, split, n)
    if rows.size == 0:
        raise ValueError(
            f"pattern of shape {shape} is all False: it declares a Jacobian with no non-zero "
            f"entry, so there is nothing to compute; mark True every entry that may be non-zero"
        )
    return Coordinates(rows, cols, int(m), int(n), y_shape, x_s)


def _rows_cols(pattern: torch.Tensor, split: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Flat rows and columns of the ``True`` entries, sorted row-major, each entry once: the
    pattern's dimensions before ``split`` are the output's, the others the input's (``n``
    elements).

    A COO pattern's indices are combined in NumPy, with no division (torch's masked index and
    ``sum(0)`` over a 6-D pattern's indices cost 1.5–2 ms on a process's first call, NumPy's
    0.1 ms); a dense one's ``nonzero`` over its flat ``(m, n)`` view.  Entries out of order or
    repeated (a COO pattern built with ``is_coalesced=True`` that is not, CSR columns out of
    order) take one sort of the flat positions."""
    if pattern.layout == torch.sparse_coo:
        p = pattern.coalesce()
        idx = p.indices().numpy()
        keep = p.values().numpy()
        if not keep.all():
            idx = idx[:, keep]
        rows, cols = _ravel(idx[:split], p.shape[:split]), _ravel(idx[split:], p.shape[split:])
    elif pattern.layout == torch.sparse_csr:  # 2-D
        crow, col, val = pattern.crow_indices(), pattern.col_indices(), pattern.values()
        rows_t = torch.repeat_interleave(torch.arange(pattern.shape[0]), crow.diff())
        rows, cols = rows_t[val].numpy(), col[val].to(torch.int64).numpy()
    else:
        both = pattern.reshape(-1, n).nonzero().numpy() if n else np.zeros((0, 2), np.int64)
        rows, cols = np.ascontiguousarray(both[:, 0]), np.ascontiguousarray(both[:, 1])
    lin = rows * n + cols
    if lin.size > 1 and not bool(np.all(lin[1:] > lin[:-1])):
        lin = sorted_unique(lin)
        rows, cols = np.divmod(lin, n)
    return rows, cols


def _ravel(idx: np.ndarray, shape: tuple[int, ...] | torch.Size) -> np.ndarray:
    """Row-major flat positions of the multi-indices ``idx`` (one row per dimension) in
    ``shape``, ``int64``."""
    if len(shape) == 0:
        return np.zeros(idx.shape[1], dtype=np.int64)
    flat = idx[0].astype(np.int64, copy=True)
    for d in range(1, len(shape)):
        flat *= int(shape[d])
        flat += idx[d]
    return flat


def sorted_unique(a: np.ndarray) -> np.ndarray:
    """``np.unique(a)`` for ``int64`` keys, without its hashing (numpy 2.3+ hashes first, then
    sorts: 1.2 s of 2.8 s at 10⁶ unknowns): nothing to do when ``a`` is already strictly
    increasing (a coalesced COO or CSR pattern), else one sort and a comparison."""
    if a.size < 2 or bool(np.all(a[1:] > a[:-1])):
        return a
    a = np.sort(a)
    keep = np.empty(a.size, dtype=bool)
    keep[0] = True
    np.not_equal(a[1:], a[:-1], out=keep[1:])
    return a[keep]


def sparsity_pattern(
    fn: Callable[[torch.Tensor], torch.Tensor],
    x: torch.Tensor,
    *,
    points: int = 3,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    r"""A local sparsity pattern: where dense Jacobians at a few random points are non-zero.

    Computes ``gradarg.jacobian(fn, p)`` at ``points`` random points
    ``p = x + ε·(1 + |x|)``, ``ε ~ N(0, 1)``, and returns the union of their non-zeros.

    This is a *local, empirical* pattern: an entry whose derivative vanishes at every probed
    point (``relu`` below its kink at all of them, a branch never taken, an exact cancellation)
    is missed, and a compressed Jacobian built on the pattern would then be wrong where that
    entry is not zero.  Prefer a pattern derived from the structure of ``fn`` (which inputs
    each output reads); check results with ``certify=`` of :class:`SparseJacobian`.  It costs
    ``points`` dense Jacobians, so it is only for sizes where those fit in memory.

    Parameters
    ----------
    fn : callable
        ``fn(x)`` returns one real floating tensor.
    x : torch.Tensor
        Real floating point around which to probe; not modified.
    points : int
        Number of random points (at least 1).
    generator : optional
        A ``torch.Generator``: source of the random points (default: one seeded with 0, so
        the result is reproducible); the global generator is never advanced.

    Returns
    -------
    torch.Tensor
        Dense ``torch.bool`` tensor of shape ``y.shape + x.shape`` (``.to_sparse()`` for COO).

    Raises
    ------
    TypeError
        ``x`` is not a real floating (dense) tensor; ``points`` not an integer; ``generator``
        not a ``torch.Generator``.
    ValueError
        ``points < 1``; ``x`` on the meta device or holding NaN or Inf.
    MemoryError
        A dense Jacobian would not fit in memory (see :func:`gradarg.jacobian`).

    Examples
    --------
    >>> import torch
    >>> f = lambda u: u[1:] - u[:-1]    # differences: a bidiagonal Jacobian
    >>> sparsity_pattern(f, torch.zeros(4)).int()
    tensor([[1, 1, 0, 0],
            [0, 1, 1, 0],
            [0, 0, 1, 1]], dtype=torch.int32)
    """
    check_callable("fn", fn)
    if not isinstance(x, torch.Tensor) or not x.is_floating_point():
        raise TypeError(
            f"x must be a real floating torch.Tensor, got "
            f"{x.dtype if isinstance(x, torch.Tensor) else type(x).__name__}"
        )
    check_dense("x", x)
    if not bool(torch.isfinite(x).all()):
        raise ValueError(
            "x contains NaN or Inf: the points probed around it hold them too, where fn's "
            "derivatives are NaN (and NaN != 0 would mark entries that are structurally zero); "
            "pass a finite x"
        )
    points = check_count("points", points, minimum=1)
    generator = check_generator("generator", generator)
    gen = generator if generator is not None else torch.Generator().manual_seed(0)
    base = x.detach()
    union: torch.Tensor | None = None
    for _ in range(points):
        eps = torch.randn(base.shape, generator=gen, dtype=base.dtype)
        jac = jacobian(fn, base + eps * (1 + base.abs()))
        nz = jac != 0
        union = nz if union is None else union | nz
    assert union is not None
    return union
