"""Scatters and index reductions: each written element gathers the sources sent to it.

``scatter_add``, ``scatter_reduce``, ``scatter(reduce=)``, ``index_add``, ``index_reduce``,
``index_copy``, ``put``, ``masked_scatter``, ``index_put(accumulate=True)``: the positions
each source element goes to are computed from the (constant) indices, and every output
element depends on its own element of ``self`` (kept even where it is overwritten or excluded
by ``include_self=False``: conservative) and on every source element sent to it.  Indices
computed from the values of ``x`` are refused.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import torch

from ..registry import bind, name, register, value_dependent
from ..sets import Dep, arange, broadcast_ids, group, union
from ..sets import take as take_rows

if TYPE_CHECKING:
    from ..mode import Tracer

aten = torch.ops.aten


def _constant(tr: Tracer, func, *indices) -> None:
    for t in indices:
        if isinstance(t, torch.Tensor) and (tr.is_tainted(t) or tr.dep(t) is not None):
            raise value_dependent(f"{name(func)} uses indices computed from the values of x")


def _ints(t: torch.Tensor) -> np.ndarray:
    return t.detach().to(torch.int64).numpy()


def _combine(tr: Tracer, func, self_: torch.Tensor, out: torch.Tensor, src, out_rows, in_rows,
             linear: bool = True) -> list[Dep | None]:
    parts = []
    d = tr.dep(self_)
    if d is not None:
        parts.append(d if tuple(self_.shape) == tuple(out.shape)
                     else take_rows(d, broadcast_ids(tuple(self_.shape), tuple(out.shape))))
    if src is not None and tr.dep(src) is not None:
        parts.append(group(tr.dep(src), np.asarray(out_rows, dtype=np.int64).reshape(-1),
                           np.asarray(in_rows, dtype=np.int64).reshape(-1), out.numel(), tr.n))
    if not parts:
        return [None]
    result = union(parts, tr.n)
    if not linear:
        tr.nonlinear(result)
    return [result]


@register("scatter_add", "scatter_reduce", family="scatter")
def scatter(tr: Tracer, func, args, kwargs, outs) -> list[Dep | None]:
    """``out[..., index[c], ...] ⊕= src[c]`` along ``dim`` for every position ``c`` of
    ``index``."""
    b = bind(func, args, kwargs)
    x, index, src = b["self"], b["index"], b.get("src")
    _constant(tr, func, index)
    out = outs[0]
    if not isinstance(src, torch.Tensor):  # scatter(value=, reduce=): self's sets only
        return _combine(tr, func, x, out, None, [], [])
    if index.numel() == 0:
        return _combine(tr, func, x, out, None, [], [])
    dim = b["dim"] % max(x.dim(), 1)
    coords = list(np.indices(tuple(index.shape)).reshape(index.dim(), -1)) if index.dim() else []
    if not coords:  # 0-d: one element
        out_rows, in_rows = np.array([int(index)]), np.array([0])
    else:
        target = list(coords)
        target[dim] = _ints(index).reshape(-1)
        out_rows = np.ravel_multi_index(target, tuple(out.shape))
        in_rows = np.ravel_multi_index(coords, tuple(src.shape))
    reduce = b.get("reduce")
    return _combine(tr, func, x, out, src, out_rows, in_rows,
                    linear=reduce not in ("prod", "multiply"))


@register("index_add", "index_reduce", "index_copy", family="scatter")
def index_scatter(tr: Tracer, func, args, kwargs, outs) -> list[Dep | None]:
    """Slice ``j`` of ``source`` along ``dim`` goes to slice ``index[j]`` of the output."""
    b = bind(func, args, kwargs)
    x, index, src = b["self"], b["index"], b["source"]
    _constant(tr, func, index)
    out = outs[0]
    if src.dim() == 0 or x.dim() == 0:
        return _combine(tr, func, x, out, src, [0] * src.numel(), list(range(src.numel())))
    dim = b["dim"] % x.dim()
    coords = list(np.indices(tuple(src.shape)).reshape(src.dim(), -1))
    target = list(coords)
    target[dim] = _ints(index).reshape(-1)[coords[dim]]
    out_rows = np.ravel_multi_index(target, tuple(out.shape))
    in_rows = np.arange(src.numel())
    return _combine(tr, func, x, out, src, out_rows, in_rows,
                    linear=b.get("reduce") not in ("prod",))


@register("index_fill", family="scatter")
def index_fill(tr: Tracer, func, args, kwargs, outs) -> list[Dep | None]:
    """``self`` with slices set to ``value``: each element keeps its own set and, when the
    value is a tensor computed from ``x``, gains its set (conservative)."""
    b = bind(func, args, kwargs)
    _constant(tr, func, b["index"])
    x, out, value = b["self"], outs[0], b["value"]
    if isinstance(value, torch.Tensor) and tr.dep(value) is not None:
        return _combine(tr, func, x, out, value, np.arange(out.numel()),
                        np.zeros(out.numel(), dtype=np.int64))
    return _combine(tr, func, x, out, None, [], [])


@register("put", family="scatter")
def put(tr: Tracer, func, args, kwargs, outs) -> list[Dep | None]:
    """``out.flatten()[index[k]] (+)= source.flatten()[k]``."""
    b = bind(func, args, kwargs)
    _constant(tr, func, b["index"])
    x, src, out = b["self"], b["source"], outs[0]
    idx = _ints(b["index"]).reshape(-1) % max(out.numel(), 1)
    return _combine(tr, func, x, out, src, idx, np.arange(idx.size))


@register("masked_scatter", family="scatter")
def masked_scatter(tr: Tracer, func, args, kwargs, outs) -> list[Dep | None]:
    """The ``k``-th element where ``mask`` (broadcast) holds gets ``source.flatten()[k]``."""
    b = bind(func, args, kwargs)
    _constant(tr, func, b["mask"])
    x, src, out = b["self"], b["source"], outs[0]
    where = np.flatnonzero(np.broadcast_to(b["mask"].detach().numpy(), tuple(out.shape)))
    return _combine(tr, func, x, out, src, where, np.arange(where.size))


def index_put_accumulate(tr: Tracer, func, args, kwargs, outs) -> list[Dep | None]:
    """``index_put(self, indices, values, accumulate=True)``: the positions ``self[indices]``
    reads, each gathering the (broadcast) values sent to it."""
    b = bind(func, args, kwargs)
    x, values, out = b["self"], b["values"], outs[0]
    indices = b["indices"]
    _constant(tr, func, *[i for i in indices if i is not None])
    ids = torch.from_numpy(arange(tuple(x.shape)))
    pos = aten.index.Tensor(ids, list(indices)).numpy()
    vals = broadcast_ids(tuple(values.shape), pos.shape)
    return _combine(tr, func, x, out, values, pos.reshape(-1), vals)
