"""A compressed derivative's input check and seeds, and its values laid out as the caller asked:
dense, sparse COO or CSR.

Shared by :class:`~gradarg.SparseJacobian` and :class:`~gradarg.SparseHessian` (and their
modes, :mod:`gradarg.sparse.modes`): both check ``x`` (and ``fn(x)``) against the pattern the
same way, seed one pass per colour, and return the values of the pattern's entries (flat
row-major coordinates ``rows``, ``cols``) with the shape ``row_shape + col_shape`` (COO, dense)
or as the flat ``m × n`` matrix (CSR).
"""

from __future__ import annotations

import math
import warnings

import torch

from .._validate import check_dense
from ..core.compose import inside_transform, transform_name

LAYOUTS = (torch.sparse_coo, torch.sparse_csr, torch.strided)


def check_layout(layout: torch.layout) -> None:
    if not isinstance(layout, torch.layout) or layout not in LAYOUTS:
        raise ValueError(
            f"layout must be torch.sparse_coo, torch.sparse_csr or torch.strided, got {layout}"
        )


def refuse_in_transform(call: str) -> None:
    """Raise ``ValueError`` when ``call`` runs inside a ``torch.func`` transform.

    A compressed pass runs on a detached copy of ``x`` (and the compiled one under
    ``no_grad``): inside ``grad``, ``jacrev``, ``jacfwd``, ``hessian`` or ``vmap`` its result
    would be cut from the transform, a silently wrong (zero) outer derivative, so it refuses
    there and names what composes instead."""
    if inside_transform():
        raise ValueError(
            f"{call} computes a compressed derivative on a detached copy of x, which torch.func "
            f"transforms cannot differentiate or batch; it was called inside {transform_name()}. "
            "Call it outside the transform, or use gradarg.jacobian, torch.func.jacrev / jacfwd "
            "or torch.func.hessian inside it: they compose"
        )


def check_x(x: object, n: int, x_shape: tuple[int, ...] | None) -> None:
    """``x`` must be a real floating tensor with ``n`` elements (of shape ``x_shape``, if
    known): ``TypeError`` / ``ValueError`` saying what it is and what the pattern expects."""
    if not isinstance(x, torch.Tensor) or not x.is_floating_point():
        raise TypeError(
            f"x must be a real floating torch.Tensor (float32/float64), got "
            f"{x.dtype if isinstance(x, torch.Tensor) else type(x).__name__}"
        )
    check_dense("x", x)
    if x.numel() != n or (x_shape is not None and tuple(x.shape) != x_shape):
        want = x_shape if x_shape is not None else f"{n} elements"
        raise ValueError(f"x has shape {tuple(x.shape)}; the pattern expects {want}")


def check_y(y: object, m: int, y_shape: tuple[int, ...] | None) -> torch.Tensor:
    """``y = fn(x)`` must be one real floating tensor with ``m`` elements (of shape
    ``y_shape``, if known): ``TypeError`` / ``ValueError`` saying what it is and what the
    pattern expects; returns ``y``."""
    if not isinstance(y, torch.Tensor) or not y.is_floating_point():
        what = y.dtype if isinstance(y, torch.Tensor) else type(y).__name__
        raise TypeError(f"fn must return one real floating tensor, got {what}")
    if y.numel() != m or (y_shape is not None and tuple(y.shape) != y_shape):
        want = y_shape if y_shape is not None else f"{m} elements"
        raise ValueError(f"fn(x) has shape {tuple(y.shape)}; the pattern expects {want}")
    return y


def colour_seeds(colors: torch.Tensor, size: int, dtype: torch.dtype) -> torch.Tensor:
    """The compressed seeds, ``passes × size``: row ``c`` is the sum of the one-hots of the
    elements of colour ``c`` (``colors``: ``int64``, one colour per element)."""
    passes = int(colors.max()) + 1 if colors.numel() else 0
    seeds = torch.zeros(passes, size, dtype=dtype)
    seeds[colors, torch.arange(size)] = 1
    return seeds


def unravel(flat: torch.Tensor, shape: tuple[int, ...]) -> list[torch.Tensor]:
    """Row-major flat indices into ``shape`` -> one index tensor per dimension."""
    out = []
    for size in reversed(shape):
        out.append(flat % size)
        flat = flat // size
    return out[::-1]


def crow_indices(rows: torch.Tensor, m: int) -> torch.Tensor:
    """CSR row pointers of sorted row indices ``rows`` of an ``m``-row matrix."""
    counts = torch.bincount(rows, minlength=m)
    return torch.cat([counts.new_zeros(1), counts.cumsum(0)])


def coo_indices(rows: torch.Tensor, cols: torch.Tensor, row_shape: tuple[int, ...],
                col_shape: tuple[int, ...]) -> torch.Tensor:
    """COO indices (``len(row_shape) + len(col_shape)`` × nnz) of flat coordinates."""
    index = unravel(rows, row_shape) + unravel(cols, col_shape)
    return torch.stack(index) if index else torch.zeros(0, rows.numel(), dtype=torch.int64)


def assemble(values: torch.Tensor, rows: torch.Tensor, cols: torch.Tensor,
             row_shape: tuple[int, ...], col_shape: tuple[int, ...], layout: torch.layout, *,
             crow: torch.Tensor | None = None, indices: torch.Tensor | None = None,
             ) -> torch.Tensor:
    """``values`` at ``(rows, cols)`` in ``layout``; ``crow``/``indices`` when already known."""
    m, n = math.prod(row_shape), math.prod(col_shape)
    if layout == torch.strided:
        dense = torch.zeros(m * n, dtype=values.dtype)
        dense[rows * n + cols] = values
        return dense.view(*row_shape, *col_shape)
    if layout == torch.sparse_csr:
        crow = crow_indices(rows, m) if crow is None else crow
        with warnings.catch_warnings():  # "Sparse CSR tensor support is in beta state"
            warnings.simplefilter("ignore", UserWarning)
            return torch.sparse_csr_tensor(crow, cols, values, (m, n), check_invariants=False)
    indices = coo_indices(rows, cols, row_shape, col_shape) if indices is None else indices
    return torch.sparse_coo_tensor(
        indices, values, (*row_shape, *col_shape), is_coalesced=True, check_invariants=False
    )
