"""Layer, group and batch normalisation: each output element depends on its group."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import torch

from ..registry import (
    bind,
    name,
    refusal,
    register,
)
from ..sets import Dep, UnsupportedOpError, take
from ..sets import group as grouped

if TYPE_CHECKING:
    from ..mode import Tracer

aten = torch.ops.aten


@register(
    "native_layer_norm",
    "native_group_norm",
    "native_batch_norm",
    "_native_batch_norm_legit",
    "_native_batch_norm_legit_no_training",
    "_native_batch_norm_legit_functional",
    "_batch_norm_with_update",
    "_batch_norm_with_update_functional",
    "_batch_norm_no_update",
    family="normalisation",
)
def normalization(tr: Tracer, func, args, kwargs, outs) -> list[Dep | None]:
    """Layer, group and batch normalisation (``native_layer_norm``, ``native_group_norm``,
    ``native_batch_norm`` and its functional forms).

    Every output element depends on every input element of its group, as do the saved
    mean and inverse standard deviation (and updated running statistics), one row per
    group: the normalised trailing slice (layer norm), the channel group of one sample
    (group norm), the channel across the batch and positions (batch norm in training).
    Batch norm in evaluation is elementwise and affine.  Weight, bias and running
    statistics computed from ``x`` are refused.
    """
    packet = func.overloadpacket
    b = bind(func, args, kwargs)
    x = b["input"]
    for key in ("weight", "bias", "running_mean", "running_var"):
        if tr.dep(b.get(key)) is not None or tr.is_tainted(b.get(key)):
            raise refusal(func, f" with a {key} computed from x")
    d = tr.dep(x)
    shape = tuple(x.shape)
    numel = math.prod(shape)
    ids = np.arange(numel, dtype=np.int64)
    if packet is aten.native_layer_norm:
        size = math.prod(shape[len(shape) - len(b["normalized_shape"]) :])
        gid, groups = ids // max(size, 1), numel // max(size, 1)
    elif packet is aten.native_group_norm:
        per_sample, group = int(b["C"]) * int(b["HxW"]), int(b["group"])
        per_group = max(per_sample // group, 1)
        gid = (ids // per_sample) * group + (ids % per_sample) // per_group
        groups = int(b["N"]) * group
    else:
        training = packet not in (aten._native_batch_norm_legit_no_training,
                                  aten._batch_norm_no_update) and bool(b.get("training", True))
        if not training:
            return [d] + [
                Dep(np.zeros(o.numel() + 1, dtype=np.int64), np.zeros(0, dtype=np.int64))
                for o in outs[1:]
            ]
        inner = math.prod(shape[2:])
        gid, groups = (ids // inner) % shape[1], shape[1]
    reduced = grouped(d, gid, ids, groups, tr.n)
    out = take(reduced, gid)
    tr.nonlinear(out)
    # running statistics updated in place (functionalization fails on them when they are
    # captured constants; then the mode sees the write): their new values depend on x
    for key in ("running_mean", "running_var"):
        t = b.get(key)
        if (isinstance(t, torch.Tensor) and t.numel() == groups and _written(func, key)
                and not any(t is o for o in outs)):
            tr.deps[t] = reduced
    result: list[Dep | None] = [out]
    for o in outs[1:]:
        if o.numel() == groups:
            result.append(reduced)
        elif o.numel() == 0:
            result.append(Dep(np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64)))
        else:  # pragma: no cover - an output this rule does not know
            raise UnsupportedOpError(f"{name(func)}: output of shape {tuple(o.shape)}")
    return result


def _written(func, key: str) -> bool:
    return any(a.name == key and a.alias_info is not None and a.alias_info.is_write
               for a in func._schema.arguments)
