"""The input checks of the show helpers: what can be shown, with which options, and whether
its text fits in memory; one clear ``TypeError`` / ``ValueError`` (``MemoryError`` for sizes)
per misuse, naming the argument."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from .._validate import check_memory, check_shape

__all__ = [
    "MAX_DIGITS",
    "TEXT_BYTES_PER_ENTRY",
    "check_digits",
    "check_entries",
    "check_text_memory",
    "check_vjp_result",
    "jacobian_arg",
    "numeric",
    "shown",
    "table_args",
]


MAX_DIGITS = 40


def check_digits(digits: Any, name: str = "digits") -> int:
    """``digits`` as an integer from 1 to :data:`MAX_DIGITS` (``TypeError`` / ``ValueError``)."""
    if isinstance(digits, (bool, np.bool_)) or not isinstance(digits, (int, np.integer)):
        raise TypeError(f"{name} must be an integer (significant digits), got {digits!r} "
                        f"({type(digits).__name__})")
    if not 1 <= digits <= MAX_DIGITS:
        raise ValueError(f"{name} must be from 1 to {MAX_DIGITS} (significant digits), got "
                         f"{digits}")
    return int(digits)


def shown(name: str, t: torch.Tensor) -> torch.Tensor:
    """A tensor whose values can be shown: a meta tensor is refused (``ValueError``, it has
    none), a sparse one densified (its zeros shown), after a check that the dense copy and
    its text fit in memory."""
    if t.is_meta:
        raise ValueError(f"{name} is on the meta device, which holds shapes but no values: "
                         f"there is nothing to show; compute it on a real device")
    if t.layout != torch.strided:
        # the dense copy, and some 10 bytes of text per entry
        check_memory(f"showing the sparse {name} densified ({t.numel()} entries)",
                     t.numel() * (t.element_size() + 10),
                     f"Instead: show {name}.coalesce().values() and its indices")
        return t.to_dense()
    return t


def numeric(name: str, value: Any) -> Any:
    """A number, tensor or array; a NumPy scalar or a 0-d array as it is; else ``TypeError``."""
    if isinstance(value, torch.Tensor):
        return shown(name, value)
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "biufc":
            raise TypeError(f"{name} must hold numbers, got an array of dtype {value.dtype}")
        return value
    if isinstance(value, (int, float, complex, np.number, np.bool_)):
        return value
    raise TypeError(f"{name} must be a number, a torch.Tensor or a numpy.ndarray, got "
                    f"{type(value).__name__}")



# Bytes per entry while a tensor's text is built: the entry's str object (about 50 bytes plus
# its digits) and its share of the joined text.
TEXT_BYTES_PER_ENTRY = 64


def check_text_memory(name: str, value: Any, digits: int) -> None:
    if isinstance(value, (torch.Tensor, np.ndarray)):
        entries = value.numel() if isinstance(value, torch.Tensor) else value.size
        check_memory(f"the text of {name} ({entries} entries)",
                     entries * (TEXT_BYTES_PER_ENTRY + digits),
                     "Instead: gradarg.summarize (shape, a few entries and the norm)")



def jacobian_arg(name: str, jac: Any, out_shape: Any, shape_name: str) -> torch.Tensor:
    if not isinstance(jac, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor (a Jacobian of shape y.shape + "
                        f"x.shape), got {type(jac).__name__}")
    out = check_shape(shape_name, out_shape)
    jac = shown(name, jac)
    if tuple(jac.shape[: len(out)]) != out:
        raise ValueError(f"{name} has shape {tuple(jac.shape)}, which does not start with "
                         f"{shape_name} = {out}; expected a Jacobian of shape y.shape + "
                         f"x.shape")
    return jac



def check_entries(max_entries: Any) -> int:
    if isinstance(max_entries, (bool, np.bool_)) or not isinstance(max_entries, (int, np.integer)):
        raise TypeError(f"max_entries must be an integer, got {max_entries!r}")
    if max_entries < 0:
        raise ValueError(f"max_entries must be at least 0, got {max_entries}")
    return int(max_entries)



def table_args(rows: Any, headers: Any, digits: Any, max_entries: Any,
                ) -> tuple[list[list[Any]], list[str]]:
    """The checks of :func:`markdown_table`: rows of cells, one per header, and the options."""
    check_digits(digits)
    check_entries(max_entries)
    if isinstance(headers, str) or not isinstance(headers, Sequence) or not all(
            isinstance(h, str) for h in headers):
        raise TypeError(f"headers must be a sequence of strings, got {headers!r}")
    if isinstance(rows, (str, torch.Tensor, np.ndarray)) or not isinstance(rows, Sequence):
        raise TypeError(f"rows must be a sequence of rows (lists of cells), got "
                        f"{type(rows).__name__}")
    out = []
    for i, row in enumerate(rows):
        if isinstance(row, str) or not isinstance(row, Sequence):
            raise TypeError(f"rows[{i}] must be a sequence of cells, got {type(row).__name__}")
        if len(row) != len(headers):
            raise ValueError(f"rows[{i}] has {len(row)} cells but there are {len(headers)} "
                             f"headers; every row needs one cell per header")
        cells = [shown(f"rows[{i}][{j}]", c) if isinstance(c, torch.Tensor) else c
                 for j, c in enumerate(row)]
        for j, c in enumerate(cells):  # a long tensor's full values are written out too
            check_text_memory(f"rows[{i}][{j}]", c, digits)
        out.append(cells)
    return out, list(headers)


def check_vjp_result(v: torch.Tensor, jac: torch.Tensor, result: torch.Tensor) -> None:
    """``ValueError`` unless ``result`` is ``vᵀJ`` (``v`` contracted with ``jac`` over ``v``'s
    dimensions) within 64 eps of the narrowest dtype among them, relative to ``Σ |v_i||J_ij|``
    (the rounding of that sum): an equation shown with it would be false."""
    wide = torch.complex128 if any(t.is_complex() for t in (v, jac, result)) else torch.float64
    vv, jj = v.reshape(-1).to(wide), jac.reshape(v.numel(), -1).to(wide)
    want, got = vv @ jj, result.reshape(-1).to(wide)
    if not want.numel():
        return
    kinds = [t.dtype for t in (v, jac, result) if t.is_floating_point() or t.is_complex()]
    eps = max((torch.finfo(d).eps for d in kinds), default=torch.finfo(torch.float64).eps)
    scale = (vv.abs()[:, None] * jj.abs()).sum(0)
    err = (got - want).abs()
    bad = err > 64 * eps * scale + torch.finfo(torch.float64).tiny
    if bool(bad.any()):
        k = int(bad.nonzero()[0])
        raise ValueError(
            f"result is not vᵀJ: its entry {k} is {got[k].item():.6g} where v contracted with "
            f"jac gives {want[k].item():.6g}; the equation would be false: pass result = "
            "vᵀJ (v @ J for a 2-D J, or the .grad of a backward with gradient=v)")
