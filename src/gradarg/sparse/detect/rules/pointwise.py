"""Pointwise operators: each output element depends on the same elements of its operands."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from ..registry import (
    ZERO_SECOND_DERIVATIVE,
    floating,
    leaves,
)
from ..sets import Dep, broadcast_ids, take, union

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
