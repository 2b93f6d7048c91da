"""Sequential greedy colouring in a given vertex order, and the orders of the literature.

A graph is given as compressed adjacency ``(indptr, indices)`` (neighbours of ``v`` are
``indices[indptr[v]:indptr[v + 1]]``, both directions stored).  :func:`greedy` gives each vertex,
in order, the smallest colour none of its coloured neighbours has.  The orders:

* ``largest_first``: by decreasing degree (ties by index: the order of
  ``networkx.greedy_color(strategy="largest_first")``, so the colourings are equal);
* ``smallest_last``: repeatedly remove a vertex of smallest remaining degree; colour in the
  reverse removal order (Matula and Beck, J. ACM 30, 1983);
* ``incidence_degree``: next the vertex with most already-ordered neighbours;
* ``dynamic_largest_first``: next the vertex with most not-yet-ordered neighbours;
* ``random_sequential``: a random permutation (seeded, reproducible).

These are the orders of Gebremedhin, Manne and Pothen, "What color is your Jacobian?",
SIAM Review 47 (2005), section 6, each computed with bucket queues in ``O(|V| + |E|)``.
The loops are compiled by numba on first use (:mod:`gradarg.sparse._numba`); before numba is
loaded, small graphs run the same loops interpreted (:func:`gradarg.sparse._pycolor.greedy`,
:func:`gradarg.sparse._pycolor.bucket_order`: the same colours and orders), as
:func:`gradarg.sparse._numba.use_numba` decides.
"""

from __future__ import annotations

import numpy as np

from . import _pycolor
from ._buckets import append, unlink
from ._numba import interpreted, lazy_njit, use_numba

__all__ = ["ORDERS", "greedy", "order"]

ORDERS = (
    "largest_first",
    "smallest_last",
    "incidence_degree",
    "dynamic_largest_first",
    "random_sequential",
)


def greedy(indptr: np.ndarray, indices: np.ndarray, sequence: np.ndarray | list[int]) -> np.ndarray:
    """Colour vertices in ``sequence`` with the smallest colour free among their neighbours."""
    if not use_numba(lambda: _pycolor.order_seconds(_i64(indptr), _i64(indices))):
        with interpreted():
            adj = _pycolor.adjacency(_i64(indptr), _i64(indices))
            return np.array(_pycolor.greedy(adj, _i64(sequence).tolist()), dtype=np.int64)
    return _greedy(_i64(indptr), _i64(indices), _i64(sequence))


def _i64(a) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.int64)


@lazy_njit
def _greedy(ptr, ind, sequence):  # pragma: no cover - compiled
    n = ptr.size - 1
    color = np.full(n, -1, dtype=np.int64)
    widest = 0
    for v in range(n):
        widest = max(widest, ptr[v + 1] - ptr[v])
    mark = np.full(widest + 2, -1, dtype=np.int64)
    for t in range(sequence.size):
        v = sequence[t]
        for p in range(ptr[v], ptr[v + 1]):
            c = color[ind[p]]
            if c >= 0 and c <= widest:
                mark[c] = v
        c = 0
        while mark[c] == v:
            c += 1
        color[v] = c
    return color


def order(indptr: np.ndarray, indices: np.ndarray, name: str) -> np.ndarray:
    """The vertex order ``name`` (one of :data:`ORDERS`) as an ``int64`` array
    (``random_sequential``: the permutation of a generator seeded with 0)."""
    n = len(indptr) - 1
    degree = np.diff(indptr)
    if name == "largest_first":
        return np.argsort(-degree, kind="stable")
    if name == "random_sequential":
        return np.random.default_rng(0).permutation(n)
    if name == "smallest_last":
        return _bucket_order(indptr, indices, degree, pick_max=False, step=-1)[::-1].copy()
    if name == "dynamic_largest_first":
        return _bucket_order(indptr, indices, degree, pick_max=True, step=-1)
    if name == "incidence_degree":
        return _bucket_order(indptr, indices, np.zeros(n, np.int64), pick_max=True, step=1)
    raise ValueError(f"order must be one of {ORDERS}, got {name!r}")


def _bucket_order(indptr, indices, start, *, pick_max: bool, step: int) -> np.ndarray:
    """Pick vertices one by one by the extreme key; each pick adds ``step`` to the keys of its
    not-yet-picked neighbours (a bucket queue, :mod:`gradarg.sparse._buckets`)."""
    n = len(indptr) - 1
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    top = int(start.max()) + (n + 2 if step > 0 else 2)
    if not use_numba(lambda: _pycolor.order_seconds(_i64(indptr), _i64(indices))):
        with interpreted():
            adj = _pycolor.adjacency(_i64(indptr), _i64(indices))
            found = _pycolor.bucket_order(adj, _i64(start).tolist(), pick_max, step, top)
            return np.array(found, dtype=np.int64)
    return _bucket_kernel(_i64(indptr), _i64(indices), _i64(start).copy(), pick_max, step, top)


@lazy_njit
def _bucket_kernel(ptr, ind, key, pick_max, step, top):  # pragma: no cover - compiled
    n = ptr.size - 1
    head = np.full(top, -1, dtype=np.int64)
    tail = np.full(top, -1, dtype=np.int64)
    nxt = np.full(n, -1, dtype=np.int64)
    prv = np.full(n, -1, dtype=np.int64)
    for v in range(n):
        append(head, tail, nxt, prv, key[v], v)
    done = np.zeros(n, dtype=np.bool_)
    out = np.empty(n, dtype=np.int64)
    cur = key.max() if pick_max else key.min()
    for t in range(n):
        if pick_max:
            while head[cur] < 0:
                cur -= 1
        else:
            while head[cur] < 0:
                cur += 1
        v = head[cur]
        unlink(head, tail, nxt, prv, cur, v)
        done[v] = True
        out[t] = v
        for p in range(ptr[v], ptr[v + 1]):
            w = ind[p]
            if not done[w]:
                k = key[w]
                unlink(head, tail, nxt, prv, k, w)
                key[w] = k + step
                append(head, tail, nxt, prv, k + step, w)
        if pick_max and step > 0:
            cur += 1  # a neighbour may now sit one bucket higher
        elif not pick_max and step < 0:
            cur = max(cur - 1, 0)
    return out
