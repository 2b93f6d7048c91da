"""Reductions, scans and softmax: each output element depends on a slice of its operand."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import torch

from ..registry import (
    ZERO_SECOND_DERIVATIVE,
    bind,
    dim_list,
    floating,
    register,
)
from ..sets import Dep, arange, broadcast_ids, group, take, union

if TYPE_CHECKING:
    from ..mode import Tracer

aten = torch.ops.aten


@register(
    "sum", "mean", "nansum", "nanmean", "prod", "amax", "amin", "max", "min",
    "linalg_vector_norm", "norm", "var", "std", "logsumexp", "var_mean", "std_mean", "aminmax",
    family="reductions",
)
def reduction(tr: Tracer, func, args, kwargs, outs) -> list[Dep | None]:
    """Reductions over given dimensions or all: each output element depends on its slice."""
    packet = func.overloadpacket
    b = bind(func, args, kwargs)
    x = b["self"]
    shape = tuple(x.shape)
    dims = dim_list(b.get("dim"), len(shape))
    keep = [i for i in range(len(shape)) if i not in dims]
    ids = arange(shape).transpose(keep + dims) if shape else arange(shape)
    m_out = math.prod(shape[i] for i in keep)
    r = math.prod(shape[i] for i in dims)
    in_rows = ids.reshape(m_out, r).reshape(-1)
    out_rows = np.repeat(np.arange(m_out, dtype=np.int64), r)
    d = group(tr.dep(x), out_rows, in_rows, m_out, tr.n)
    if packet not in ZERO_SECOND_DERIVATIVE:
        tr.nonlinear(d)
    result: list[Dep | None] = []
    for o in outs:
        result.append(d if floating(o) and o.numel() == m_out else None)
    return result


@register("cumsum", "cumprod", "logcumsumexp", "cummax", "cummin", family="reductions")
def scan(tr: Tracer, func, args, kwargs, outs) -> list[Dep | None]:
    """Scans: element ``i`` along the dimension depends on elements ``0..i``."""
    packet = func.overloadpacket
    b = bind(func, args, kwargs)
    x = b["self"]
    shape = tuple(x.shape)
    d = tr.dep(x)
    if shape:
        dim = b["dim"] % len(shape)
        length = shape[dim]
        groups = np.moveaxis(arange(shape), dim, -1).reshape(-1, length)
        p, q = np.tril_indices(length)
        out_rows = groups[:, p].reshape(-1)
        in_rows = groups[:, q].reshape(-1)
        d = group(d, out_rows, in_rows, math.prod(shape), tr.n)
    if packet not in ZERO_SECOND_DERIVATIVE:
        tr.nonlinear(d)
    return [d if floating(o) else None for o in outs]


@register("_softmax", "_log_softmax", "softmax", "log_softmax", "_safe_softmax",
          family="reductions")
def softmax(tr: Tracer, func, args, kwargs, outs) -> list[Dep | None]:
    """``softmax``, ``log_softmax``: every element depends on its whole slice along ``dim``."""
    b = bind(func, args, kwargs)
    d = whole_dim(tr.dep(b["self"]), tuple(b["self"].shape), b["dim"], tr.n)
    tr.nonlinear(d)
    return [d]


def whole_dim(d: Dep | None, shape: tuple[int, ...], dim: int, n: int) -> Dep | None:
    """Every element depends on every element of its slice along ``dim``."""
    if not shape:
        return d
    dim %= len(shape)
    t = np.moveaxis(arange(shape), dim, -1)
    length = shape[dim]
    groups = t.reshape(-1, length)
    m_out = groups.shape[0]
    reduced = group(
        d,
        np.repeat(np.arange(m_out, dtype=np.int64), length),
        groups.reshape(-1),
        m_out,
        n,
    )
    owner = np.empty(math.prod(shape), dtype=np.int64)
    owner[groups.reshape(-1)] = np.repeat(np.arange(m_out, dtype=np.int64), length)
    return take(reduced, owner)


@register("_softmax_backward_data", "_log_softmax_backward_data", family="reductions")
def softmax_backward(tr: Tracer, func, args, kwargs, outs) -> list[Dep | None]:
    """The backward of ``softmax`` (``grad_output``, ``output``, ``dim``): every element
    depends on the slices along ``dim`` of both."""
    b = bind(func, args, kwargs)
    o = outs[0]
    parts: list[Dep] = [d for d in (tr.dep(b["grad_output"]), tr.dep(b["output"]))
                        if d is not None]
    d = whole_dim(union(parts, tr.n), tuple(o.shape), b["dim"], tr.n)
    tr.nonlinear(d)
    return [d]


@register("linalg_cross", "cross", family="reductions")
def cross(tr: Tracer, func, args, kwargs, outs) -> list[Dep | None]:
    """``cross(self, other, dim)``: every element depends on the (broadcast) vectors of both
    along ``dim`` (three elements each)."""
    b = bind(func, args, kwargs)
    o = outs[0]
    shape = tuple(o.shape)
    parts = []
    for t in (b["self"], b["other"]):
        d = tr.dep(t)
        if d is not None:
            parts.append(d if tuple(t.shape) == shape
                         else take(d, broadcast_ids(tuple(t.shape), shape)))
    dim = b.get("dim")
    dim = -1 if dim is None else dim
    d = whole_dim(union(parts, tr.n), shape, dim, tr.n)
    tr.nonlinear(d)
    return [d]


@register("renorm", family="reductions")
def renorm(tr: Tracer, func, args, kwargs, outs) -> list[Dep | None]:
    """``renorm(self, p, dim, maxnorm)``: each sub-tensor ``self.select(dim, i)`` is scaled by
    its norm, so every element depends on its sub-tensor."""
    b = bind(func, args, kwargs)
    x = b["self"]
    shape = tuple(x.shape)
    if not shape:
        return [tr.dep(x)]
    dim = b["dim"] % len(shape)
    gid = np.broadcast_to(np.arange(shape[dim]).reshape(
        [shape[dim] if i == dim else 1 for i in range(len(shape))]), shape).reshape(-1)
    reduced = group(tr.dep(x), gid, np.arange(x.numel(), dtype=np.int64), shape[dim], tr.n)
    d = take(reduced, gid)
    tr.nonlinear(d)
    return [d]


@register("glu", family="reductions")
def glu(tr: Tracer, func, args, kwargs, outs) -> list[Dep | None]:
    """``glu(self, dim)``: ``a * sigmoid(b)`` for the two halves along ``dim``: element ``i``
    depends on element ``i`` of each half."""
    b = bind(func, args, kwargs)
    x = b["self"]
    shape = tuple(x.shape)
    dim = b["dim"] % len(shape)
    half = shape[dim] // 2
    ids = arange(shape)
    first = np.take(ids, np.arange(half), axis=dim).reshape(-1)
    second = np.take(ids, np.arange(half, 2 * half), axis=dim).reshape(-1)
    d = union([take(tr.dep(x), first), take(tr.dep(x), second)], tr.n)
    tr.nonlinear(d)
    return [d]


@register("trace", family="reductions")
def trace(tr: Tracer, func, args, kwargs, outs) -> list[Dep | None]:
    """``trace`` of a matrix: the sum of its diagonal."""
    x = args[0]
    rows, cols = x.shape
    diag = np.arange(min(rows, cols), dtype=np.int64) * (cols + 1)
    return [group(tr.dep(x), np.zeros(diag.size, dtype=np.int64), diag, 1, tr.n)]


@register("_cdist_forward", family="reductions")
def cdist(tr: Tracer, func, args, kwargs, outs) -> list[Dep | None]:
    """``cdist(x1, x2)``: distance ``(i, j)`` of a batch depends on row ``i`` of ``x1`` and row
    ``j`` of ``x2`` in that batch (batches broadcast: a batch index of size 1 serves all)."""
    x1, x2, o = args[0], args[1], outs[0]
    batch = tuple(o.shape[:-2])
    P, R = o.shape[-2], o.shape[-1]
    nb = math.prod(batch)
    parts = []
    for t, which in ((x1, 0), (x2, 1)):
        d = tr.dep(t)
        if d is None:
            continue
        m_rows, width = t.shape[-2], t.shape[-1]
        rows_of = group(d, np.repeat(np.arange(t.numel() // max(width, 1), dtype=np.int64),
                                     width), np.arange(t.numel(), dtype=np.int64),
                        t.numel() // max(width, 1), tr.n) if width else None
        if rows_of is None:
            continue
        tb = tuple(t.shape[:-2])
        row_base = broadcast_ids(tb, batch) * m_rows if nb else np.zeros(0, dtype=np.int64)
        grid = np.arange(P)[:, None] if which == 0 else np.arange(R)[None, :]
        ids = (row_base[:, None, None] + np.broadcast_to(grid, (P, R))[None]).reshape(-1)
        parts.append(take(rows_of, ids))
    if not parts:
        return [None]
    d = union(parts, tr.n)
    tr.nonlinear(d)
    return [d]
