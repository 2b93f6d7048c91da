"""The symmetrised pattern ``P ∪ Pᵀ ∪ I`` of a Hessian, in CSR, without a comparison sort.

The pattern's coordinates are sorted row-major (its CSR arrays); its transpose comes from a
counting sort (:func:`gradarg.sparse.d2color.bipartite`), sorted too; each row of the union
is then a merge of three sorted lists (row ``i`` of ``P``, column ``i`` of ``P``, and ``i``),
in ``O(nnz + n)``, compiled by numba.  (numpy's ``unique`` over the concatenated keys hashed,
then sorted: 2–6 ms of a 7 ms star colouring on a 64 × 64 grid.)  Before numba is loaded
(:func:`gradarg.sparse._numba.use_numba`), one ``np.sort`` of the keys ``i * n + j`` gives the
same arrays (:func:`symmetric_union`, a radix sort where one fits: 0.6 ms on that grid).
"""

from __future__ import annotations

import numpy as np

from ._numba import interpreted, lazy_njit, use_numba
from .d2color import bipartite
from .pattern import Coordinates

__all__ = ["symmetric_union", "symmetrized"]


def symmetrized(coords: Coordinates):
    """``(rows, cols, indptr, indices)``: the entries of ``P ∪ Pᵀ ∪ I`` sorted row-major, and
    the adjacency (off-diagonal entries) in CSR."""
    n = coords.n
    if use_numba(0.0):
        rptr, rind, cptr, cind = bipartite(coords, "rows")
        ptr, cols = _merge(rptr, rind, cptr, cind, n)
    else:
        with interpreted():
            ptr, cols = symmetric_union(coords.rows, coords.cols, n)
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(ptr))
    indptr = ptr - np.arange(n + 1, dtype=np.int64)  # one diagonal entry per row
    return rows, cols, indptr, cols[rows != cols]


@lazy_njit
def _merge(rptr, rind, cptr, cind, n):  # pragma: no cover - compiled
    out = np.empty(rptr[n] + cptr[n] + n, dtype=np.int64)
    ptr = np.zeros(n + 1, dtype=np.int64)
    end = n + 1  # larger than any column
    k = 0
    for i in range(n):
        a, b, d = rptr[i], cptr[i], i
        while True:
            va = rind[a] if a < rptr[i + 1] else end
            vb = cind[b] if b < cptr[i + 1] else end
            v = min(va, vb, d)
            if v == end:
                break
            if va == v:
                a += 1
            if vb == v:
                b += 1
            if d == v:
                d = end
            out[k] = v
            k += 1
        ptr[i + 1] = k
    return ptr, out[:k].copy()


def symmetric_union(rows: np.ndarray, cols: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """CSR ``(ptr, cols)`` of ``P ∪ Pᵀ ∪ I`` for the ``n × n`` pattern with entries
    ``(rows, cols)``, each row sorted.

    Entries in row-major order (a CSR pattern's) with ``n <= 65536``: ``Pᵀ``'s keys come from
    a radix sort of the columns (numpy's stable sort of ``uint16``) and the three sorted key
    lists are merged by a stable sort (which merges runs); a pattern that is its own
    transpose with a full diagonal is returned as it is.  Otherwise one ``np.sort`` of all the
    keys (about 1.1 against 0.5 ms on the 64 × 64 grid's 27,909 entries).
    """
    diagonal = np.arange(n, dtype=np.int64)
    key = rows * n + cols
    if 0 < n <= _RADIX and key.size > 1 and bool((key[1:] > key[:-1]).all()):
        by_column = np.argsort(cols.astype(np.uint16), kind="stable")  # rows stay sorted
        transposed = cols[by_column] * n + rows[by_column]
        if np.array_equal(key, transposed) and np.count_nonzero(rows == cols) == n:
            ptr = np.zeros(n + 1, dtype=np.int64)
            np.cumsum(np.bincount(rows, minlength=n), out=ptr[1:])
            return ptr, cols.astype(np.int64, copy=True)
        key = np.concatenate([key, transposed, diagonal * (n + 1)])
        key.sort(kind="stable")  # three sorted runs: merged
    else:
        key = np.concatenate([key, cols * n + rows, diagonal * (n + 1)])
        key.sort()
    first = np.empty(key.size, dtype=bool)
    first[0] = True
    np.not_equal(key[1:], key[:-1], out=first[1:])
    key = key[first]
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(key // n, minlength=n), out=ptr[1:])
    return ptr, key % n


_RADIX = 1 << 16
"""Most columns for :func:`symmetric_union`'s radix sort (``uint16`` columns)."""
