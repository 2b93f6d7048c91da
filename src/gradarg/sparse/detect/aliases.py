"""Writes through views: the sets of every tensor that shares the written memory.

Functionalization (``torch.func.functionalize``) turns the in-place writes of ``fn``'s Python
code into functional operators, but operators implemented in C++ that write into a fresh
tensor through views (``F.pad(mode="circular")`` copies slices into a ``new_empty`` tensor)
reach the tracing mode as ``slice`` + ``copy_``.  The set of the written view is then right,
and the tensor it is a view of must follow.  :class:`Aliases` keeps, for every storage the
mode has seen, the (weakly held) tensors on it; after an operator writes into one of them,
:meth:`Aliases.after_write` rebuilds the sets of the others element by element, from the
storage offsets each tensor element occupies (its shape, strides and storage offset), so that
views of any kind (``slice``, ``select``, ``as_strided``, ``transpose``, ``view_as_real``)
and writes of any kind (``copy_``, ``index_put_``, ``add_``, ``out=``) carry dependencies.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from .sets import Dep, empty, group, take, vstack

if TYPE_CHECKING:
    from .mode import Tracer

__all__ = ["Aliases"]


def _key(t: torch.Tensor) -> int | None:
    if t.layout != torch.strided or t.device.type == "meta":
        return None
    try:
        s = t.untyped_storage()
    except (RuntimeError, NotImplementedError):  # tensor subclasses without storage
        return None
    return s.data_ptr() if s.nbytes() else None


def slots(t: torch.Tensor, unit: int) -> np.ndarray:
    """The storage slots (of ``unit`` bytes) each element of ``t`` covers: shape
    ``(numel, itemsize // unit)``."""
    size = t.element_size()
    per = max(size // unit, 1)
    offsets = np.zeros(tuple(t.shape), dtype=np.int64) + int(t.storage_offset()) * per
    for d, (n, st) in enumerate(zip(t.shape, t.stride(), strict=True)):
        shape = [1] * t.dim()
        shape[d] = n
        offsets = offsets + (np.arange(n, dtype=np.int64) * st * per).reshape(shape)
    flat = offsets.reshape(-1)
    return flat[:, None] + np.arange(per, dtype=np.int64)[None, :]


class Aliases:
    """Tensors by the storage they live on (weak references: nothing is kept alive)."""

    def __init__(self) -> None:
        self.by_storage: dict[int, dict[int, weakref.ref]] = {}

    def add(self, t: Any) -> None:
        if not isinstance(t, torch.Tensor) or not (t.is_floating_point() or t.is_complex()):
            return
        k = _key(t)
        if k is None:
            return
        group_ = self.by_storage.setdefault(k, {})
        ref = group_.get(id(t))
        if ref is None or ref() is not t:
            group_[id(t)] = weakref.ref(t)

    def others(self, t: torch.Tensor) -> list[torch.Tensor]:
        k = _key(t)
        if k is None:
            return []
        group_ = self.by_storage.get(k, {})
        alive = []
        for i, ref in list(group_.items()):
            u = ref()
            if u is None:
                del group_[i]
            elif u is not t:
                alive.append(u)
        return alive

    def storage(self, tr: Tracer, t: torch.Tensor) -> tuple[Dep, np.ndarray]:
        """The sets of the storage ``t`` lives on, one row per element of ``t``'s size:
        ``(stacked, owner)`` with ``owner[k]`` the row of ``stacked`` storage element ``k``
        holds (-1: an element no tensor the mode has seen covers, a constant)."""
        tensors = [u for u in self.others(t) if u.element_size() == t.element_size()] + [t]
        size = max(1, t.untyped_storage().nbytes() // t.element_size())
        owner = np.full(size, -1, dtype=np.int64)
        deps, offset = [], 0
        for u in tensors:
            d = tr.dep(u)
            s = slots(u, u.element_size())[:, 0]
            ok = (s >= 0) & (s < size)
            owner[s[ok]] = np.arange(offset, offset + u.numel(), dtype=np.int64)[ok]
            deps.append(d if d is not None else empty(u.numel()))
            offset += u.numel()
        return vstack(deps), owner

    def after_write(self, tr: Tracer, written: torch.Tensor) -> None:
        """``written`` has just got its new sets: give every other tensor on its storage the
        sets of the elements it shares with it (the others' elements are unchanged)."""
        others = self.others(written)
        if not others:
            return
        tensors = [*others, written]  # the written tensor last: its sets win
        unit = min(t.element_size() for t in tensors)
        size = max(1, written.untyped_storage().nbytes() // unit)
        owner = np.full(size, -1, dtype=np.int64)
        deps, offset = [], 0
        for t in tensors:
            d = tr.dep(t)
            if d is None:
                d = empty(t.numel())
            s = slots(t, unit)
            ok = (s >= 0) & (s < size)
            rows = np.broadcast_to(np.arange(offset, offset + t.numel())[:, None], s.shape)
            owner[s[ok]] = rows[ok]
            deps.append(d)
            offset += t.numel()
        stacked = vstack(deps)
        for t in others:
            s = slots(t, unit)
            s = np.clip(s, 0, size - 1)
            ids = owner[s]
            if ids.shape[1] == 1:
                d = take(stacked, ids[:, 0])
            else:
                d = group(stacked, np.repeat(np.arange(t.numel(), dtype=np.int64), ids.shape[1]),
                          ids.reshape(-1), t.numel(), tr.n)
            if d.indices.size == 0 and tr.dep(t) is None:
                continue
            tr.deps[t] = d if d.m == t.numel() else empty(t.numel())
