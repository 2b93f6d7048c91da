"""Index sets: for each element of a tensor, the input elements it may depend on.

A :class:`Dep` is a boolean ``numel × n`` matrix in compressed sparse row form (``indptr``,
``indices``; rows sorted and unique).  Every rule of :mod:`.rules` builds its output's sets
from its operands' with the functions here; none of them looks at values.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["Dep", "UnsupportedOpError", "arange", "broadcast_ids", "empty", "from_pairs",
           "group", "identity", "take", "union", "vstack"]


class UnsupportedOpError(NotImplementedError):
    """An operator on a tensor that depends on ``x`` has no sparsity rule (or cannot have one)."""


class Dep:
    __slots__ = ("indices", "indptr")

    def __init__(self, indptr: np.ndarray, indices: np.ndarray) -> None:
        self.indptr = indptr
        self.indices = indices

    @property
    def m(self) -> int:
        return self.indptr.size - 1

    def lengths(self) -> np.ndarray:
        return np.diff(self.indptr)

    def rows(self) -> np.ndarray:
        return np.repeat(np.arange(self.m, dtype=np.int64), self.lengths())


def identity(n: int) -> Dep:
    return Dep(np.arange(n + 1, dtype=np.int64), np.arange(n, dtype=np.int64))


def from_pairs(rows: np.ndarray, cols: np.ndarray, m: int, n: int) -> Dep:
    """Canonical CSR of the (row, col) pairs: sorted, duplicates removed."""
    if rows.size == 0:
        return empty(m)
    keys = sorted_unique(rows * n + cols)
    r, c = np.divmod(keys, n)
    indptr = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(np.bincount(r, minlength=m), out=indptr[1:])
    return Dep(indptr, c)


def take(dep: Dep | None, ids: np.ndarray) -> Dep:
    """Row ``k`` of the result is row ``ids[k]`` of ``dep`` (empty where ``ids[k] < 0``;
    every row empty when ``dep`` is None: an operand that depends on nothing)."""
    ids = np.asarray(ids, dtype=np.int64)
    if dep is None or dep.m == 0:  # (no row to take: every id is negative)
        return empty(ids.size)
    valid = ids >= 0
    safe = np.where(valid, ids, 0)
    lens = np.where(valid, dep.indptr[safe + 1] - dep.indptr[safe], 0)
    indptr = np.zeros(ids.size + 1, dtype=np.int64)
    np.cumsum(lens, out=indptr[1:])
    total = int(indptr[-1])
    pos = np.repeat(dep.indptr[safe] - indptr[:-1], lens) + np.arange(total, dtype=np.int64)
    return Dep(indptr, dep.indices[pos])


def union(deps: list[Dep], n: int) -> Dep:
    """Row-wise union of equally long row lists."""
    if len(deps) == 1:
        return deps[0]
    m = deps[0].m
    rows = np.concatenate([d.rows() for d in deps])
    cols = np.concatenate([d.indices for d in deps])
    return from_pairs(rows, cols, m, n)


def group(dep: Dep | None, out_rows: np.ndarray, in_rows: np.ndarray, m: int, n: int) -> Dep:
    """Row ``o`` of the result is the union of rows ``in_rows[k]`` with ``out_rows[k] == o``
    (every row empty when ``dep`` is None)."""
    if dep is None:
        return empty(m)
    keep = in_rows >= 0
    out_rows, in_rows = out_rows[keep], in_rows[keep]
    gathered = take(dep, in_rows)
    return from_pairs(np.repeat(out_rows, gathered.lengths()), gathered.indices, m, n)


def vstack(deps: list[Dep]) -> Dep:
    parts, offset = [np.zeros(1, dtype=np.int64)], 0
    for d in deps:
        parts.append(d.indptr[1:] + offset)
        offset += int(d.indptr[-1])
    return Dep(np.concatenate(parts), np.concatenate([d.indices for d in deps]))


def arange(shape: tuple[int, ...]) -> np.ndarray:
    return np.arange(math.prod(shape), dtype=np.int64).reshape(shape)


def broadcast_ids(shape: tuple[int, ...], out_shape: tuple[int, ...]) -> np.ndarray:
    return np.broadcast_to(arange(shape), out_shape).reshape(-1)


def empty(m: int) -> Dep:
    """``m`` elements that depend on nothing (a constant, an output with zero derivative)."""
    return Dep(np.zeros(m + 1, dtype=np.int64), np.zeros(0, dtype=np.int64))


def sorted_unique(keys: np.ndarray) -> np.ndarray:
    """``np.unique`` of int64 keys by one sort and a comparison: numpy 2.3+ ``unique`` hashes
    first (1.3 of 1.5 s of detection at n = 3·10⁵, one thread); nothing to do when the keys
    already increase strictly (a single operand's rows)."""
    if keys.size < 2 or bool(np.all(keys[1:] > keys[:-1])):
        return keys
    keys = np.sort(keys, kind="stable")  # timsort: the keys come as a few sorted runs
    keep = np.empty(keys.size, dtype=bool)
    keep[0] = True
    np.not_equal(keys[1:], keys[:-1], out=keep[1:])
    return keys[keep]
