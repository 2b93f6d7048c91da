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
"""

from __future__ import annotations

import numpy as np

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
    n = len(indptr) - 1
    ptr, ind = indptr.tolist(), indices.tolist()
    color = [-1] * n
    mark = [-1] * (max(np.diff(indptr).max(initial=0), 0) + 2)
    for v in sequence.tolist() if isinstance(sequence, np.ndarray) else sequence:
        for w in ind[ptr[v] : ptr[v + 1]]:
            c = color[w]
            if c >= 0:
                mark[c] = v
        c = 0
        while mark[c] == v:
            c += 1
        color[v] = c
    return np.asarray(color, dtype=np.int64)


def order(indptr: np.ndarray, indices: np.ndarray, name: str, seed: int = 0) -> np.ndarray:
    """The vertex order ``name`` (one of :data:`ORDERS`) as an ``int64`` array."""
    n = len(indptr) - 1
    degree = np.diff(indptr)
    if name == "largest_first":
        return np.argsort(-degree, kind="stable")
    if name == "random_sequential":
        return np.random.default_rng(seed).permutation(n)
    if name == "smallest_last":
        return _bucket_order(indptr, indices, degree, pick_max=False, step=-1)[::-1].copy()
    if name == "dynamic_largest_first":
        return _bucket_order(indptr, indices, degree, pick_max=True, step=-1)
    if name == "incidence_degree":
        return _bucket_order(indptr, indices, np.zeros(n, np.int64), pick_max=True, step=1)
    raise ValueError(f"order must be one of {ORDERS}, got {name!r}")


def _bucket_order(indptr, indices, start, *, pick_max: bool, step: int) -> np.ndarray:
    """Pick vertices one by one by the extreme key; each pick adds ``step`` to the keys of its
    not-yet-picked neighbours.  Buckets are insertion-ordered dicts (deterministic)."""
    n = len(indptr) - 1
    ptr, ind = indptr.tolist(), indices.tolist()
    key = start.tolist()
    top = (max(key, default=0) + n + 2) if step > 0 else (max(key, default=0) + 2)
    buckets: list[dict[int, None]] = [{} for _ in range(top)]
    for v in range(n):
        buckets[key[v]][v] = None
    done = [False] * n
    out = []
    cur = max(key, default=0) if pick_max else min(key, default=0)
    for _ in range(n):
        if pick_max:
            while not buckets[cur]:
                cur -= 1
        else:
            while not buckets[cur]:
                cur += 1
        v = next(iter(buckets[cur]))
        del buckets[cur][v]
        done[v] = True
        out.append(v)
        for w in ind[ptr[v] : ptr[v + 1]]:
            if not done[w]:
                k = key[w]
                del buckets[k][w]
                key[w] = k + step
                buckets[k + step][w] = None
        if pick_max and step > 0:
            cur += 1  # a neighbour may now sit one bucket higher
        elif not pick_max and step < 0:
            cur = max(cur - 1, 0)
    return np.asarray(out, dtype=np.int64)
