"""Pointwise operators: each output element depends on the same elements of its operands."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import torch

from ..registry import (
    ZERO_SECOND_DERIVATIVE,
    floating,
    leaves,
    register,
)
from ..sets import Dep, broadcast_ids, group, take, union

if TYPE_CHECKING:
    from ..mode import Tracer

aten = torch.ops.aten


def pointwise(tr: Tracer, func, args, kwargs, outs) -> list[Dep | None]:
    """Operators tagged ``torch.Tag.pointwise`` (arithmetic, ``sin``, ``exp``, ``where``,
    ``clamp``...), with broadcasting: the union of the operands' sets."""
    o = outs[0]
    packet = func.overloadpacket
    if not floating(o):
        return [None]
    shape = tuple(o.shape)
    parts, count = [], 0
    for t in leaves((args, kwargs)):
        d = tr.dep(t)
        if d is None:
            continue
        count += 1
        parts.append(
            d if tuple(t.shape) == shape else take(d, broadcast_ids(tuple(t.shape), shape))
        )
    result = union(parts, tr.n)
    if tr.hessian:
        linear = packet in ZERO_SECOND_DERIVATIVE
        if packet is aten.mul:
            linear = count == 1
        elif packet is aten.div:
            linear = count == 1 and tr.dep(args[0]) is not None
        if not linear:
            tr.add_square(result)
    return [result]


@register("hardswish", "rsub", "polar", "complex", "normal", "rrelu_with_noise",
          "log_sigmoid_forward", "frexp", "hardswish_", "_standard_gamma", "binomial",
          "poisson", "_sample_dirichlet", "logit", "xlogy", "special_xlog1py",
          "special_zeta", "lerp", "addcmul", "addcdiv", "heaviside", "masked_fill",
          family="pointwise")
def elementwise(tr: Tracer, func, args, kwargs, outs) -> list[Dep | None]:
    """Elementwise operators without torch's ``pointwise`` tag, or with several outputs
    (``frexp``, ``log_sigmoid_forward``): every floating output of the broadcast shape gets
    the union of the operands' sets."""
    first = next((o for o in outs if floating(o)), None)
    if first is None:
        return [None] * len(outs)
    (d,) = pointwise(tr, func, args, kwargs, [first])
    return [d if floating(o) and tuple(o.shape) == tuple(first.shape) else None for o in outs]


@register("_prelu_kernel", "prelu", family="pointwise")
def prelu(tr: Tracer, func, args, kwargs, outs) -> list[Dep | None]:
    """``prelu(self, weight)``: elementwise in ``self``; a weight computed from ``x`` (one
    value per channel) is counted for every element (conservative)."""
    x, w, o = args[0], args[1], outs[0]
    parts: list[Dep] = []
    dx = tr.dep(x)
    if dx is not None:
        parts.append(dx)
    dw = tr.dep(w)
    if dw is not None:
        everything = group(dw, np.zeros(w.numel(), dtype=np.int64),
                           np.arange(w.numel(), dtype=np.int64), 1, tr.n)
        parts.append(take(everything, np.zeros(o.numel(), dtype=np.int64)))
    d = union(parts, tr.n)
    if dw is not None and dx is not None:
        tr.nonlinear(d)
    return [d]


@register("addr", family="pointwise")
def addr(tr: Tracer, func, args, kwargs, outs) -> list[Dep | None]:
    """``addr(self, vec1, vec2) = β·self + α·vec1 ⊗ vec2``: element ``(i, j)`` depends on
    ``self[i, j]`` (broadcast), ``vec1[i]`` and ``vec2[j]``."""
    o = outs[0]
    rows, cols = o.shape
    parts = []
    s_, v1, v2 = args[0], args[1], args[2]
    if tr.dep(s_) is not None:
        parts.append(take(tr.dep(s_), broadcast_ids(tuple(s_.shape), tuple(o.shape))))
    if tr.dep(v1) is not None:
        parts.append(take(tr.dep(v1), np.repeat(np.arange(rows, dtype=np.int64), cols)))
    if tr.dep(v2) is not None:
        parts.append(take(tr.dep(v2), np.tile(np.arange(cols, dtype=np.int64), rows)))
    d = union(parts, tr.n)
    if tr.dep(v1) is not None and tr.dep(v2) is not None:
        tr.nonlinear(d)
    return [d]
