"""Order statistics: which element of its slice an output is depends on the values."""

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
from ..sets import Dep, arange, group, take

if TYPE_CHECKING:
    from ..mode import Tracer

aten = torch.ops.aten


@register("sort", "topk", "kthvalue", "median", "nanmedian", "mode", "msort", family="order statistics")
def order(tr: Tracer, func, args, kwargs, outs) -> list[Dep | None]:
    """``sort``, ``topk``, ``kthvalue``, ``median``/``nanmedian``/``mode`` (along a
    dimension, or over all elements), ``msort``: which element of its slice an output
    element is depends on the values, so each depends on its whole slice (conservative).
    Piecewise a selection, so no second derivative.  Index outputs carry none."""
    packet = func.overloadpacket
    b = bind(func, args, kwargs)
    x = b["self"]
    shape = tuple(x.shape)
    d = tr.dep(x)
    if not shape:
        return [d if floating(o) else None for o in outs]
    if "dim" in b and b["dim"] is not None:
        dim = int(b["dim"]) % len(shape)
    elif packet is aten.msort:
        dim = 0
    elif packet in (aten.median, aten.nanmedian) and "dim" not in b:
        dim = None
    else:
        dim = len(shape) - 1
    if dim is None:  # over all elements: one value
        whole = group(d, np.zeros(math.prod(shape), dtype=np.int64),
                       np.arange(math.prod(shape), dtype=np.int64), 1, tr.n)
        return [take(whole, np.zeros(o.numel(), dtype=np.int64)) if floating(o) else None
                for o in outs]
    keep = [i for i in range(len(shape)) if i != dim]
    slices = math.prod(shape[i] for i in keep)
    ids = arange(shape).transpose([*keep, dim]).reshape(-1)
    reduced = group(d, np.repeat(np.arange(slices, dtype=np.int64), shape[dim]), ids,
                     slices, tr.n)
    result: list[Dep | None] = []
    for o in outs:
        if not floating(o):
            result.append(None)
            continue
        o_shape = tuple(o.shape)
        if len(o_shape) == len(shape):  # sort, topk, keepdim=True: the slice of each
            owner = np.moveaxis(
                np.broadcast_to(
                    np.arange(slices, dtype=np.int64).reshape([shape[i] for i in keep] + [1]),
                    [o_shape[i] for i in keep] + [o_shape[dim]],
                ),
                -1,
                dim,
            ).reshape(-1)
        else:  # the dimension reduced away
            owner = np.arange(slices, dtype=np.int64)
        result.append(take(reduced, owner))
    return result
