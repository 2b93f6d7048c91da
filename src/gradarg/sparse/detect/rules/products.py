"""Matrix products: unions over the inner dimension, where the other operand may be non-zero."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import torch

from ..registry import (
    bind,
    floating,
    register,
)
from ..sets import Dep, arange, broadcast_ids, group, take, union

if TYPE_CHECKING:
    from ..mode import Tracer

aten = torch.ops.aten


@register("mm", "bmm", "mv", "dot", "addmm", "addmv", "baddbmm", family="products")
def product(tr: Tracer, func, args, kwargs, outs) -> list[Dep | None]:
    """Matrix products (hence ``matmul``, ``@``, ``nn.Linear``): a constant operand's zeros
    are zeros for every input."""
    o = outs[0]
    packet = func.overloadpacket
    b = bind(func, args, kwargs)
    if packet in (aten.addmm, aten.addmv, aten.baddbmm):
        a, bb, bias = (
            b["mat1" if packet is aten.addmm else "mat" if packet is aten.addmv else "batch1"],
            b["mat2" if packet is aten.addmm else "vec" if packet is aten.addmv else "batch2"],
            b["self"],
        )
    else:
        a, bb = args[0], args[1]
        bias = None
    # as batched (B, I, K) @ (B, K, J); row-major flattening is unchanged by these reshapes
    if a.dim() == 1:  # dot
        A3, B3 = a.reshape(1, 1, -1), bb.reshape(1, -1, 1)
    elif a.dim() == 2 and bb.dim() == 1:  # mv
        A3, B3 = a.unsqueeze(0), bb.reshape(1, -1, 1)
    elif a.dim() == 2:
        A3, B3 = a.unsqueeze(0), bb.unsqueeze(0)
    else:
        A3, B3 = a, bb
    nb, ni, nk = A3.shape
    nj = B3.shape[2]
    m = nb * ni * nj
    parts = []
    da, db = tr.dep(a), tr.dep(bb)
    if da is not None:
        mb = mask(tr, bb, B3)
        if mb.all():  # out(b, i, :) = union over k of A(b, i, k)
            red = group(
                da, np.repeat(np.arange(nb * ni), nk), np.arange(nb * ni * nk), nb * ni, tr.n
            )
            parts.append(take(red, np.repeat(np.arange(nb * ni), nj)))
        else:
            bs, ks, js = np.nonzero(mb)
            i = np.arange(ni)[:, None]
            out_rows = ((bs * ni + i) * nj + js).reshape(-1)
            in_rows = ((bs * ni + i) * nk + ks).reshape(-1)
            parts.append(group(da, out_rows, in_rows, m, tr.n))
    if db is not None:
        ma = mask(tr, a, A3)
        if ma.all():  # out(b, :, j) = union over k of B(b, k, j)
            ids = arange((nb, nk, nj)).transpose(0, 2, 1).reshape(-1)
            red = group(db, np.repeat(np.arange(nb * nj), nk), ids, nb * nj, tr.n)
            out_ids = np.arange(nb)[:, None, None] * nj + np.arange(nj)[None, None, :]
            parts.append(take(red, np.broadcast_to(out_ids, (nb, ni, nj)).reshape(-1)))
        else:
            bs, is_, ks = np.nonzero(ma)
            j = np.arange(nj)[:, None]
            out_rows = ((bs * ni + is_) * nj + j).reshape(-1)
            in_rows = ((bs * nk + ks) * nj + j).reshape(-1)
            parts.append(group(db, out_rows, in_rows, m, tr.n))
    if bias is not None and tr.dep(bias) is not None:
        parts.append(take(tr.dep(bias), broadcast_ids(tuple(bias.shape), tuple(o.shape))))
    d = union(parts, tr.n)
    if da is not None and db is not None:
        tr.nonlinear(d)
    return [d]


def mask(tr: Tracer, operand: torch.Tensor, shaped: torch.Tensor | None = None) -> np.ndarray:
    """Where an operand may be non-zero: everywhere unless it is a constant (then its
    non-zeros), in the shape of ``shaped`` (the operand reshaped for the product; default the
    operand itself).  Whether it is constant is asked of the operand the traced program
    passed, never of a reshaped copy, which the mode does not know."""
    shaped = operand if shaped is None else shaped
    if tr.dep(operand) is not None or tr.is_tainted(operand):
        return np.ones(tuple(shaped.shape), dtype=bool)
    return (shaped.detach() != 0).numpy()


@register("_scaled_dot_product_flash_attention_for_cpu", "_scaled_dot_product_flash_attention",
          "_scaled_dot_product_efficient_attention", "_scaled_dot_product_attention_math",
          "_scaled_dot_product_fused_attention_overrideable", family="products")
def attention(tr: Tracer, func, args, kwargs, outs) -> list[Dep | None]:
    """Scaled dot-product attention ``softmax(q kᵀ / s + mask) v`` over batches ``(..., L, E)``:
    output row ``l`` of a batch depends on query row ``l`` and on every key and value row of
    that batch (causal masking and a mask's zeros are not used: conservative); a key, value
    or mask computed from ``x`` with other leading dimensions (grouped heads, broadcast)
    feeds every row."""
    b = bind(func, args, kwargs)
    q, k, v = b["query"], b["key"], b["value"]
    lead = tuple(q.shape[:-2])
    L, E = q.shape[-2], q.shape[-1]
    g = math.prod(lead)
    rows = g * L
    n = tr.n
    parts: list[Dep] = []
    dq = tr.dep(q)
    if dq is not None:
        parts.append(group(dq, np.repeat(np.arange(rows, dtype=np.int64), E),
                           np.arange(q.numel(), dtype=np.int64), rows, n))
    shared = []
    for t in (k, v, b.get("attn_mask"), b.get("attn_bias")):
        d = tr.dep(t)
        if d is None or not isinstance(t, torch.Tensor) or t.numel() == 0:
            continue
        if tuple(t.shape[:-2]) == lead and g:
            per = group(d, np.repeat(np.arange(g, dtype=np.int64), t.numel() // g),
                        np.arange(t.numel(), dtype=np.int64), g, n)
            parts.append(take(per, np.repeat(np.arange(g, dtype=np.int64), L)))
        else:
            shared.append(group(d, np.zeros(t.numel(), dtype=np.int64),
                                np.arange(t.numel(), dtype=np.int64), 1, n))
    if shared:
        parts.append(take(union(shared, n), np.zeros(rows, dtype=np.int64)))
    if not parts:
        return [None] * len(outs)
    per_row = union(parts, n)
    tr.nonlinear(per_row)
    everything = group(per_row, np.zeros(rows, dtype=np.int64), np.arange(rows, dtype=np.int64),
                       1, n)
    result: list[Dep | None] = []
    for o in outs:
        if not floating(o) or o.numel() == 0:
            result.append(None if not floating(o) else per_row if rows == 0 else None)
        elif tuple(o.shape[: len(lead) + 1]) == (*lead, L) and rows:
            result.append(take(per_row, np.repeat(np.arange(rows, dtype=np.int64),
                                                  o.numel() // rows)))
        else:
            result.append(take(everything, np.zeros(o.numel(), dtype=np.int64)))
    return result
