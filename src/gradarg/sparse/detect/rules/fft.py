"""FFTs and complex views: dense over the transformed dimensions, independent over the others.

A complex element's set holds what its real and imaginary parts depend on (one row per
complex element).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import torch

from ..registry import bind, dim_list, floating, register
from ..sets import Dep, arange, empty, group, take

if TYPE_CHECKING:
    from ..mode import Tracer

aten = torch.ops.aten


@register("_fft_r2c", "_fft_c2c", "_fft_c2r", "fft_r2c", "fft_c2c", "fft_c2r", family="fft")
def fft(tr: Tracer, func, args, kwargs, outs) -> list[Dep | None]:
    """``_fft_r2c``, ``_fft_c2c``, ``_fft_c2r`` over ``dim``: every output element depends on
    every input element with the same indices in the other dimensions (whose sizes the
    transform keeps)."""
    b = bind(func, args, kwargs)
    x, o = b["self"], outs[0]
    d = tr.dep(x)
    shape = tuple(x.shape)
    dims = dim_list(b["dim"], len(shape))
    keep = [i for i in range(len(shape)) if i not in dims]
    if d is None or x.numel() == 0 or o.numel() == 0:
        return [None if d is None else empty(o.numel())]
    groups = math.prod(shape[i] for i in keep)
    in_gid = np.broadcast_to(arange(tuple(shape[i] for i in keep)).reshape(
        [shape[i] if i in keep else 1 for i in range(len(shape))]), shape).reshape(-1)
    o_shape = tuple(o.shape)
    out_gid = np.broadcast_to(arange(tuple(o_shape[i] for i in keep)).reshape(
        [o_shape[i] if i in keep else 1 for i in range(len(o_shape))]), o_shape).reshape(-1)
    reduced = group(d, in_gid, np.arange(x.numel(), dtype=np.int64), groups, tr.n)
    out = take(reduced, out_gid)
    return [out]


@register("view_as_real", "view_as_real_copy", family="fft")
def view_as_real(tr: Tracer, func, args, kwargs, outs) -> list[Dep | None]:
    """Both parts of a complex element carry its set."""
    d = tr.dep(args[0])
    return [take(d, np.repeat(np.arange(args[0].numel(), dtype=np.int64), 2))
            if floating(outs[0]) else None]


@register("view_as_complex", "view_as_complex_copy", family="fft")
def view_as_complex(tr: Tracer, func, args, kwargs, outs) -> list[Dep | None]:
    """A complex element carries the sets of its two parts (last dimension of size 2)."""
    m = outs[0].numel()
    return [group(tr.dep(args[0]), np.repeat(np.arange(m, dtype=np.int64), 2),
                  np.arange(2 * m, dtype=np.int64), m, tr.n)]
