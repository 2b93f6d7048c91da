"""Data movement: each output element is a copy of one operand element (or a constant)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from ..aliases import slots
from ..registry import (
    bind,
    floating,
    leaves,
    name,
    register,
    tree_map,
    value_dependent,
)
from ..sets import Dep, empty, take, vstack
from .scatter import index_put_accumulate, scatter

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
    "index_put_",
    "scatter",
    "reflection_pad1d",
    "reflection_pad2d",
    "reflection_pad3d",
    "replication_pad1d",
    "replication_pad2d",
    "replication_pad3d",
    "upsample_nearest1d",
    "upsample_nearest2d",
    "upsample_nearest3d",
    "_upsample_nearest_exact1d",
    "_upsample_nearest_exact2d",
    "_upsample_nearest_exact3d",
    "im2col",
    "movedim",
    "pixel_shuffle",
    "pixel_unshuffle",
    "lift_fresh_copy",
    "_conj",
    "resolve_conj",
    "resolve_neg",
    "block_diag",
    "rot90",
    "channel_shuffle",
    "native_channel_shuffle",
    "embedding",
    "masked_select",
    "_unsafe_masked_index",
    "_unsafe_index",
    "real",
    "imag",
    "conj",
    "view_as",
    "expand_as",
    "reshape_as",
    "column_stack",
    "hstack",
    "vstack",
    "dstack",
    "tile",
    "swapaxes",
    "swapdims",
    "moveaxis",
    "tensor_split",
    "hsplit",
    "vsplit",
    "dsplit",
    "diag",
    "index_select_backward",
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
        kind = torch.complex128 if t.is_complex() else torch.float64  # _conj, real, imag
        if d is None:
            return torch.zeros(t.shape, dtype=kind)
        ids = torch.arange(offset, offset + t.numel(), dtype=torch.float64).reshape(t.shape)
        if kind is torch.complex128:  # both parts carry the id: real() and imag() keep it
            ids = torch.complex(ids, ids)
        offset += t.numel()
        sources.append(d)
        return ids

    new_args, new_kwargs = tree_map(swap, (args, kwargs))
    b = bind(func, args, kwargs)
    if func.overloadpacket is aten.constant_pad_nd:
        new_args = (new_args[0], new_args[1], 0.0)
        new_kwargs = {}
    if func.overloadpacket in (aten.index_put, aten.index_put_) and b.get("accumulate"):
        return index_put_accumulate(tr, func, args, kwargs, outs)
    if func.overloadpacket is aten.scatter and "reduce" in b and b["reduce"] is not None:
        return scatter(tr, func, args, kwargs, outs)
    if func.overloadpacket is aten._unsafe_masked_index:
        new_args = (*new_args[:3], 0.0)
        new_kwargs = {}
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
        i = i.real if i.is_complex() else i
        # abs: conj and imag of an id may be its negative (ids are >= 1, 0 is "constant")
        flat = i.detach().reshape(-1).abs().round().to(torch.int64).numpy() - 1
        result.append(take(stacked, flat) if floating(o) else None)
    return result


def _positions(size, stride, offset: int) -> np.ndarray:
    pos = np.full(tuple(size), int(offset), dtype=np.int64)
    for d, (n, st) in enumerate(zip(size, stride, strict=True)):
        shape = [1] * len(size)
        shape[d] = n
        pos = pos + (np.arange(n, dtype=np.int64) * st).reshape(shape)
    return pos.reshape(-1)


@register("as_strided", "as_strided_copy", "as_strided_", family="moves")
def as_strided(tr: Tracer, func, args, kwargs, outs) -> list[Dep | None]:
    """``as_strided(self, size, stride, storage_offset)``: output element ``i`` is the storage
    element at ``storage_offset + Σ i_d stride_d`` of ``self``'s storage, whichever tensor the
    mode saw holds it (``self`` may be a view of a larger tensor)."""
    b = bind(func, args, kwargs)
    x = b["self"]
    offset = b.get("storage_offset")
    offset = x.storage_offset() if offset is None else int(offset)
    pos = _positions(list(b["size"]), list(b["stride"]), offset)
    stacked, owner = tr.aliases.storage(tr, x)
    ok = (pos >= 0) & (pos < owner.size)
    rows = np.where(ok, owner[np.clip(pos, 0, owner.size - 1)], -1)
    return [take(stacked, rows)]


@register("as_strided_scatter", family="moves")
def as_strided_scatter(tr: Tracer, func, args, kwargs, outs) -> list[Dep | None]:
    """``as_strided_scatter(self, src, size, stride, storage_offset)``: ``self`` with ``src``
    written at the storage positions of ``self.as_strided(size, stride, storage_offset)``
    (positions in the output's own storage)."""
    b = bind(func, args, kwargs)
    x, src, o = b["self"], b["src"], outs[0]
    offset = b.get("storage_offset")
    offset = x.storage_offset() if offset is None else int(offset)
    pos = _positions(list(b["size"]), list(b["stride"]), offset)
    dx, ds = tr.dep(x), tr.dep(src)
    stacked = vstack([dx if dx is not None else empty(x.numel()),
                      ds if ds is not None else empty(src.numel())])
    size = max(1, o.untyped_storage().nbytes() // o.element_size())
    element_at = np.full(size, -1, dtype=np.int64)
    element_at[slots(o, o.element_size())[:, 0]] = np.arange(o.numel(), dtype=np.int64)
    rows = np.arange(o.numel(), dtype=np.int64)
    hit = element_at[pos]
    rows[hit[hit >= 0]] = x.numel() + np.arange(src.numel(), dtype=np.int64)[hit >= 0]
    return [take(stacked, rows)]
