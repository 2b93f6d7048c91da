"""The symmetrised pattern ``P ∪ Pᵀ ∪ I`` of a Hessian, in CSR, without a comparison sort.

The pattern's coordinates are sorted row-major (its CSR arrays); its transpose comes from a
counting sort (:func:`gradarg.sparse.d2color.bipartite`), sorted too; each row of the union
is then a merge of three sorted lists (row ``i`` of ``P``, column ``i`` of ``P``, and ``i``),
in ``O(nnz + n)``, compiled by numba.  (numpy's ``unique`` over the concatenated keys hashed,
then sorted: 2–6 ms of a 7 ms star colouring on a 64 × 64 grid.)  Before numba is loaded
(:func:`gradarg.sparse._numba.use_numba`), one ``np.sort`` of the keys ``i * n + j`` gives the
same arrays (:func:`gradarg.sparse._pycolor.symmetric_union`: 0.8 ms on that grid).
"""

from __future__ import annotations

import numpy as np

from . import _pycolor
from ._numba import interpreted, lazy_njit, use_numba
from .d2color import bipartite
from .pattern import Coordinates

__all__ = ["symmetrized"]


def symmetrized(coords: Coordinates):
    """``(rows, cols, indptr, indices)``: the entries of ``P ∪ Pᵀ ∪ I`` sorted row-major, and
    the adjacency (off-diagonal entries) in CSR."""
    n = coords.n
    if use_numba(0.0):
        rptr, rind, cptr, cind = bipartite(coords, "rows")
        ptr, cols = _merge(rptr, rind, cptr, cind, n)
    else:
        with interpreted():
            ptr, cols = _pycolor.symmetric_union(coords.rows, coords.cols, n)
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
