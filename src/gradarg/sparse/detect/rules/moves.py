"""Data movement: each output element is a copy of one operand element (or a constant)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch

from ..registry import (
    bind,
    floating,
    leaves,
    name,
    refusal,
    register,
    tree_map,
    value_dependent,
)
from ..sets import Dep, take, vstack

if TYPE_CHECKING:
    from ..mode import Tracer

aten = torch.ops.aten


@register(
    "view",
    "_unsafe_view",
    "reshape",
    "view_copy",
    "_reshape_alias",
    "_reshape_alias_copy",
    "permute",
    "permute_copy",
    "transpose",
    "transpose_copy",
    "transpose_",
    "t",
    "t_copy",
    "t_",
    "expand",
    "expand_copy",
    "squeeze",
    "squeeze_copy",
    "squeeze_",
    "unsqueeze",
    "unsqueeze_copy",
    "unsqueeze_",
    "alias",
    "alias_copy",
    "clone",
    "slice",
    "slice_copy",
    "select",
    "select_copy",
    "narrow",
    "narrow_copy",
    "index",
    "index_select",
    "gather",
    "take",
    "cat",
    "stack",
    "constant_pad_nd",
    "flip",
    "roll",
    "repeat",
    "unfold",
    "unfold_copy",
    "diagonal",
    "diagonal_copy",
    "diag_embed",
    "tril",
    "triu",
    "split",
    "split_copy",
    "split_with_sizes",
    "split_with_sizes_copy",
    "unsafe_split",
    "unsafe_split_with_sizes",
    "unsafe_chunk",
    "unbind",
    "unbind_copy",
    "chunk",
    "slice_scatter",
    "select_scatter",
    "diagonal_scatter",
    "copy",
    "copy_",
    "index_put",
    "scatter",
    "reflection_pad1d",
    "reflection_pad2d",
    "replication_pad1d",
    "replication_pad2d",
    "upsample_nearest1d",
    "upsample_nearest2d",
    "im2col",
    "movedim",
    "pixel_shuffle",
    "pixel_unshuffle",
    "lift_fresh_copy",
    "_conj",
    "resolve_conj",
    "resolve_neg",
    family="moves",
)
def moves(tr: Tracer, func, args, kwargs, outs) -> list[Dep | None]:
    """Data movement (views, slicing, indexing with constant indices, ``cat``, padding,
    ``*_scatter``): the operator itself, run on a tensor of element ids, says which element
    each output element is a copy of."""
    sources: list[Dep] = []
    offset = 1  # id 0 means "no dependency": zeros, padding, constants

    def swap(t: Any) -> Any:
        nonlocal offset
        if not isinstance(t, torch.Tensor) or not floating(t):
            if tr.is_tainted(t):
                raise value_dependent(f"{name(func)} uses indices computed from the values of x")
            return t
        d = tr.dep(t)
        if d is None:
            return torch.zeros(t.shape, dtype=torch.float64)
        ids = torch.arange(offset, offset + t.numel(), dtype=torch.float64).reshape(t.shape)
        offset += t.numel()
        sources.append(d)
        return ids

    new_args, new_kwargs = tree_map(swap, (args, kwargs))
    b = bind(func, args, kwargs)
    if func.overloadpacket is aten.constant_pad_nd:
        new_args = (new_args[0], new_args[1], 0.0)
        new_kwargs = {}
    if func.overloadpacket is aten.index_put and b.get("accumulate"):
        raise refusal(func, " with accumulate=True")
    if func.overloadpacket is aten.scatter and "reduce" in b and b["reduce"] is not None:
        raise refusal(func, " with reduce=")
    if func.overloadpacket is aten.scatter and func._overloadname.startswith("value"):
        new_args = list(new_args)
        new_args[3] = 0.0
    ids_out = func(*new_args, **new_kwargs)
    stacked = vstack(sources)
    result: list[Dep | None] = []
    for o, i in zip(
        outs,
        [t for t in leaves(ids_out) if isinstance(t, torch.Tensor)],
        strict=True,
    ):
        flat = i.detach().reshape(-1).round().to(torch.int64).numpy() - 1
        result.append(take(stacked, flat) if floating(o) else None)
    return result
