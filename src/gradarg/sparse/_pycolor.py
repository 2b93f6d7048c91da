"""The default colourings without numba: bit-identical results, for patterns too small to pay
numba's start-up.

Each function here gives exactly what its compiled counterpart gives (same algorithm, same
tie-breaks; ``tests/sparse/test_pycolor.py`` compares them on hundreds of random patterns and
on the benchmark problems); :mod:`gradarg.sparse._numba` says which runs when.  The work is
split by what the interpreter does well:

* **vectorised NumPy where the result is exact**: transposes (a sort of ``column * m + row``
  keys: rows stay sorted within each column, as the counting sort leaves them), the symmetrised
  pattern ``P ∪ Pᵀ ∪ I`` (a sort of keys), and the distance-2 graph of a bipartite pattern
  (every walk ``v → w → x`` laid out at once, duplicates dropped keeping each neighbour's first
  occurrence in walk order: the order in which the compiled DSATUR visits them);
* **Python sets and lists where the loop is sequential**: greedy colouring (the colours of a
  vertex's neighbours gathered by ``map`` into a ``set``), DSATUR (the compiled bucket queue
  and binary heap, the same moves; each vertex's neighbour colours as the bits of an ``int``),
  star colouring (per vertex, the set of colours seen once and the set seen twice among its
  neighbours) and the bucket orders of :mod:`gradarg.sparse.greedy`.

The callers run these inside :func:`gradarg.sparse._numba.interpreted`, which pauses Python's
garbage collector (a full collection set off by the thousands of lists and sets cost 50–150 ms
in a process that has imported torch).

Measured against the other ways to avoid numba (one thread, a loaded 2-core machine; the
benchmarks' Gray-Scott 2 × 48 × 48 Jacobian and 64 × 64 minimal-surface Hessian, compiled
4.8 ms and 3.5 ms to build; here 23 ms and 32 ms, 28 ms and 34 ms in a fresh process):

* the compiled kernels' own bodies run by CPython: 205 ms and 255 ms on Python lists (on numpy
  arrays, about 45 times the compiled time);
* ``scipy.sparse`` for the intersection graph: 150–300 ms to import (not a dependency);
  torch's sparse product ``P Pᵀ``: 8.3 ms for the Gray-Scott graph alone, against 2.3 ms for
  :func:`distance2_graph`;
* rustworkx's ``graph_greedy_color``: its ``Degree`` order gives the largest-first colouring
  exactly, in 8.7 ms on Gray-Scott with the graph built from ours, against 3.8 ms for
  :func:`adjacency` and :func:`greedy`; its DSATUR breaks ties otherwise (11 colours there,
  where ours finds 10); networkx's DSATUR is pure Python and takes seconds.

The ``*_seconds`` functions estimate the interpreted cost of a colouring from counts read off
the pattern or its graph (edges, edges between vertices more than 4096 apart, vertices), with
constants fitted to measured runs by ``benchmarks/colour_costs.py`` (measured over estimated:
0.5–1.4 on stencils, bands and random patterns of 1 ms to 0.5 s), for
:func:`gradarg.sparse._numba.use_numba`.
"""

from __future__ import annotations

import heapq
from itertools import pairwise
from typing import cast

import numpy as np

__all__ = [
    "MAX_WALK",
    "adjacency",
    "bucket_order",
    "distance2_graph",
    "distance2_graph_seconds",
    "distance2_seconds",
    "dsatur_buckets",
    "dsatur_heap",
    "far_edges",
    "greedy",
    "order_seconds",
    "smallest_last_removal",
    "star",
    "star_seconds",
    "transpose",
]

# seconds per count, fitted by benchmarks/colour_costs.py (see the module docstring); an edge
# between vertices more than _NEAR apart costs more (a cache miss: the interpreter's objects of
# the two vertices lie far apart in memory)
_NEAR = 4096
_GRAPH = (1.8e-8, 1.0e-8)  # distance-2 graph: per step of the walks, per vertex
_COLOUR = (1.6e-7, 2.4e-7, 7.0e-7)  # largest-first + DSATUR: per edge, far edge, vertex
_STAR = (1.4e-7, 1.1e-6, 1.7e-8, 4.0e-7)  # star: per edge, far edge, pair of edges, vertex
_ORDER = (6.5e-8, 1.7e-7, 2.6e-7)  # bucket orders, greedy colouring: per edge, far edge, vertex


def far_edges(ptr: np.ndarray, ind: np.ndarray) -> int:
    """Stored edges ``v – x`` of the graph ``(ptr, ind)`` with ``|v - x| > 4096``."""
    owner = np.repeat(np.arange(len(ptr) - 1, dtype=np.int64), np.diff(ptr))
    return int(np.count_nonzero(np.abs(np.asarray(ind) - owner) > _NEAR))


MAX_WALK = 2**21
"""Most steps of the walks :func:`distance2_graph` lays out at once (about 62 bytes each at
its peak, measured: 130 MB); past it, :func:`distance2_graph_seconds` is infinite (numba)."""


def distance2_graph_seconds(pa: np.ndarray, ia: np.ndarray, pb: np.ndarray) -> float:
    """What an interpreted distance-2 colouring of the vertices ``(pa, ia)`` through the other
    side's CSR pointers ``pb`` costs at least, in estimated seconds, known before its graph is
    built: :func:`distance2_graph` (the walks take ``Σ_w len(w)²`` steps), and the loops on
    the fewest edges the graph can have (each vertex meets at least the other vertices of its
    longest line).  Infinite past :data:`MAX_WALK` steps."""
    nv = len(pa) - 1
    lengths = np.diff(pb)
    walk = float(lengths.astype(np.float64) @ lengths)
    if walk > MAX_WALK:
        return float("inf")
    through = lengths[ia]  # per entry of a vertex: the length of its line on the other side
    has = np.diff(pa) > 0
    longest = np.maximum.reduceat(through, pa[:-1][has]) if through.size else through
    fewest = float(np.sum(longest - 1))
    return _GRAPH[0] * walk + _GRAPH[1] * nv + _COLOUR[0] * fewest + _COLOUR[2] * nv


def distance2_seconds(ptr: np.ndarray, ind: np.ndarray) -> float:
    """Estimated seconds of an interpreted distance-2 colouring (largest-first, then DSATUR)
    of the graph ``(ptr, ind)`` (from :func:`distance2_graph`): edges, far edges, vertices."""
    return (_COLOUR[0] * float(ptr[-1]) + _COLOUR[1] * far_edges(ptr, ind)
            + _COLOUR[2] * (len(ptr) - 1))


def star_seconds(indptr: np.ndarray, indices: np.ndarray) -> float:
    """Estimated seconds of one interpreted star colouring of the graph ``(indptr, indices)``:
    edges, far edges, pairs of adjacent edges ``Σ_w deg(w)²``, vertices."""
    degree = np.diff(indptr).astype(np.float64)
    return (_STAR[0] * float(indptr[-1]) + _STAR[1] * far_edges(indptr, indices)
            + _STAR[2] * float(degree @ degree) + _STAR[3] * (len(indptr) - 1))


def order_seconds(indptr: np.ndarray, indices: np.ndarray) -> float:
    """Estimated seconds of an interpreted bucket order or greedy colouring of the graph
    ``(indptr, indices)``: edges, far edges, vertices."""
    return (_ORDER[0] * float(indptr[-1]) + _ORDER[1] * far_edges(indptr, indices)
            + _ORDER[2] * (len(indptr) - 1))


# --------------------------------------------------------------------------- vectorised


def transpose(ptr: np.ndarray, ind: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """CSC ``(tptr, tind)`` of the CSR pattern ``(ptr, ind)`` with ``n`` columns, rows sorted
    within each column (what the compiled counting sort gives)."""
    m = max(len(ptr) - 1, 1)
    rows = np.repeat(np.arange(len(ptr) - 1, dtype=np.int64), np.diff(ptr))
    key = ind.astype(np.int64) * m + rows
    key.sort()
    count = np.bincount(ind, minlength=n)
    tptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(count, out=tptr[1:])
    # each key less its column's offset (no division: 0.21 against 0.34 ms with `% m` on
    # Gray-Scott's 27,648 entries, 44 against 75 us on Burgers' 5,998)
    key -= np.repeat(np.arange(n, dtype=np.int64) * m, count)
    return tptr, key


def distance2_graph(pa: np.ndarray, ia: np.ndarray, pb: np.ndarray, ib: np.ndarray,
                    packed: bool | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The distance-2 graph of the vertices ``(pa, ia)`` through ``(pb, ib)`` (two vertices
    adjacent when they share a line), as compressed adjacency ``(ptr, ind)``: each vertex's
    neighbours once, itself left out, in the order of their first visit by the walk ``v → w =
    ia[p] → x = ib[q]`` (``p``, then ``q``, increasing).

    The walk's steps are sorted by ``(vertex, neighbour, step)``: packed into one ``int64``
    key (``packed=None``: when it fits) and sorted by ``np.sort``, or by ``np.lexsort``.
    """
    nv = len(pa) - 1
    lengths = np.diff(pb)[ia]  # steps of the walk through each entry of a vertex's line
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(nv + 1, dtype=np.int64), np.zeros(0, dtype=np.int64)
    owner = np.repeat(np.repeat(np.arange(nv, dtype=np.int64), np.diff(pa)), lengths)
    offset = np.repeat(pb[ia] - (np.cumsum(lengths) - lengths), lengths)
    x = ib[offset + np.arange(total, dtype=np.int64)]
    # sort the steps by (vertex, neighbour, step): the first of each run is the first visit
    if packed is None:
        packed = nv * nv * total < 2**62
    if packed:
        key = (owner * nv + x) * total + np.arange(total, dtype=np.int64)
        key.sort()
        pair, step = np.divmod(key, total)
    else:
        step = np.lexsort((x, owner))  # stable: equal pairs keep walk order
        pair = owner[step] * nv + x[step]
    first = np.empty(total, dtype=bool)
    first[0] = True
    np.not_equal(pair[1:], pair[:-1], out=first[1:])
    step = np.sort(step[first])  # back to walk order: vertex by vertex, first visits
    owner, x = owner[step], x[step]
    keep = owner != x
    ptr = np.zeros(nv + 1, dtype=np.int64)
    np.cumsum(np.bincount(owner[keep], minlength=nv), out=ptr[1:])
    return ptr, x[keep]


def adjacency(ptr: np.ndarray, ind: np.ndarray) -> list[list[int]]:
    """The compressed adjacency as one Python list of neighbours per vertex."""
    flat = ind.tolist()
    bounds = ptr.tolist()
    return [flat[a:b] for a, b in pairwise(bounds)]


# --------------------------------------------------------------------------- sequential


def greedy(adj: list[list[int]], sequence: list[int]) -> list[int]:
    """Each vertex of ``sequence`` takes the smallest colour none of its neighbours has (the
    others keep ``-1``)."""
    color = [-1] * len(adj)
    get = color.__getitem__
    for v in sequence:
        used = set(map(get, adj[v]))
        c = 0
        while c in used:
            c += 1
        color[v] = c
    return color


def dsatur_buckets(adj: list[list[int]], degree: list[int]) -> list[int]:
    """DSATUR with the compiled bucket queue (``gradarg.sparse.d2color._dsatur_buckets``):
    keys ``saturation * span + uncoloured neighbours``, one first-in first-out list per key,
    a vertex raised at once when its saturation grows, lowered lazily when it reaches the
    front of a bucket above its key."""
    nv = len(adj)
    span = max(max(degree, default=0) + 2, 2)
    color = [-1] * nv
    key = list(degree)
    where = list(degree)  # the bucket each vertex sits in (>= its key)
    seen = [0] * nv  # the colours among its neighbours, as the bits of an int
    head = [-1] * (span * span)
    tail = [-1] * (span * span)
    nxt = [-1] * nv
    prv = [-1] * nv
    cur = 0
    for v in range(nv):
        b = key[v]
        prv[v] = t = tail[b]
        if t >= 0:
            nxt[t] = v
        else:
            head[b] = v
        tail[b] = v
        cur = max(cur, b)
    for _ in range(nv):
        while True:
            while head[cur] < 0:
                cur -= 1
            v = head[cur]
            after = nxt[v]  # unlink the head of bucket cur
            head[cur] = after
            if after >= 0:
                prv[after] = -1
            else:
                tail[cur] = -1
            k = key[v]
            if where[v] == k:
                break
            where[v] = k  # lowered lazily: to the tail of its true bucket
            nxt[v] = -1
            prv[v] = t = tail[k]
            if t >= 0:
                nxt[t] = v
            else:
                head[k] = v
            tail[k] = v
        mine = seen[v]
        c = (~mine & (mine + 1)).bit_length() - 1  # the lowest bit not set
        color[v] = c
        bit = 1 << c
        for x in adj[v]:
            if color[x] >= 0:
                continue
            theirs = seen[x]
            if theirs & bit:
                key[x] -= 1
                continue
            seen[x] = theirs | bit
            k = key[x] = key[x] - 1 + span
            b, before, after = where[x], prv[x], nxt[x]  # unlink x from its bucket
            if before >= 0:
                nxt[before] = after
            else:
                head[b] = after
            if after >= 0:
                prv[after] = before
            else:
                tail[b] = before
            where[x] = k  # append it to the tail of its new bucket
            nxt[x] = -1
            prv[x] = t = tail[k]
            if t >= 0:
                nxt[t] = x
            else:
                head[k] = x
            tail[k] = x
            cur = max(cur, k)
    return color


def dsatur_heap(adj: list[list[int]], degree: list[int]) -> list[int]:
    """DSATUR as the compiled binary-heap version (``gradarg.sparse.d2color._dsatur``) picks:
    the largest key ``saturation * span + uncoloured neighbours``, ties by lowest index (stale
    entries overestimate and are pushed again with the true key)."""
    nv = len(adj)
    span = max(max(degree, default=0) + 2, 2)
    color = [-1] * nv
    key = list(degree)
    seen = [0] * nv  # the colours among its neighbours, as the bits of an int
    heap = [-(key[v] * nv + (nv - 1 - v)) for v in range(nv)]  # a max-heap, negated
    heapq.heapify(heap)
    for _ in range(nv):
        while True:
            top = -heapq.heappop(heap)
            v = nv - 1 - top % nv
            if color[v] >= 0:
                continue
            now = key[v] * nv + (nv - 1 - v)
            if top == now:
                break
            heapq.heappush(heap, -now)
        mine = seen[v]
        c = (~mine & (mine + 1)).bit_length() - 1  # the lowest bit not set
        color[v] = c
        bit = 1 << c
        for x in adj[v]:
            if color[x] >= 0:
                continue
            key[x] -= 1
            theirs = seen[x]
            if not theirs & bit:
                seen[x] = theirs | bit
                key[x] += span
                heapq.heappush(heap, -(key[x] * nv + (nv - 1 - x)))
    return color


def smallest_last_removal(adj: list[list[int]], key: list[int]) -> list[int]:
    """:func:`bucket_order` with ``pick_max=False, step=-1`` (smallest-last's removal order,
    ``key`` the degrees) by lazy deletion: a vertex whose key falls is appended to its new
    bucket, its old entry skipped at the front (keys only fall: an entry is current exactly
    when its vertex's key, ``-1`` once removed, is its bucket's).  The same order in about a
    third of the linked lists' time (2 against 8.5 ms, the 64 × 64 grid's 7-point stencil)."""
    n = len(adj)
    key = list(key)
    buckets: list[list[int]] = [[] for _ in range(max(key, default=0) + 2)]
    for v in range(n):
        buckets[key[v]].append(v)
    adds = [bucket.append for bucket in buckets]
    heads = [0] * len(buckets)
    out = []
    cur = min(key, default=0)
    for _ in range(n):
        while True:
            bucket, h = buckets[cur], heads[cur]
            end = len(bucket)
            while h < end and key[bucket[h]] != cur:
                h += 1
            heads[cur] = h + (h < end)
            if h < end:
                break
            cur += 1
        v = bucket[h]
        key[v] = -1
        out.append(v)
        for w in adj[v]:
            k = key[w] - 1  # a neighbour still there has v among its remaining ones: k >= 0
            if k >= 0:
                key[w] = k
                adds[k](w)
        if cur:
            cur -= 1
    return out


def bucket_order(adj: list[list[int]], key: list[int], pick_max: bool, step: int,
                 top: int) -> list[int]:
    """The compiled bucket order of :mod:`gradarg.sparse.greedy` (``_bucket_kernel``): pick
    the vertex at the front of the extreme bucket, add ``step`` to the keys of its
    not-yet-picked neighbours (each moved to the tail of its new bucket)."""
    if not pick_max and step == -1:
        return smallest_last_removal(adj, key)
    n = len(adj)
    key = list(key)
    head = [-1] * top
    tail = [-1] * top
    nxt = [-1] * n
    prv = [-1] * n
    for v in range(n):
        b = key[v]
        prv[v] = t = tail[b]
        if t >= 0:
            nxt[t] = v
        else:
            head[b] = v
        tail[b] = v
    done = [False] * n
    out = []
    cur = max(key) if pick_max else min(key)
    for _ in range(n):
        if pick_max:
            while head[cur] < 0:
                cur -= 1
        else:
            while head[cur] < 0:
                cur += 1
        v = head[cur]
        after = nxt[v]
        head[cur] = after
        if after >= 0:
            prv[after] = -1
        else:
            tail[cur] = -1
        done[v] = True
        out.append(v)
        for w in adj[v]:
            if done[w]:
                continue
            k = key[w]
            before, after = prv[w], nxt[w]
            if before >= 0:
                nxt[before] = after
            else:
                head[k] = after
            if after >= 0:
                prv[after] = before
            else:
                tail[k] = before
            k += step
            key[w] = k
            nxt[w] = -1
            prv[w] = t = tail[k]
            if t >= 0:
                nxt[t] = w
            else:
                head[k] = w
            tail[k] = w
        if pick_max and step > 0:
            cur += 1  # a neighbour may now sit one bucket higher
        elif not pick_max and step < 0:
            cur = max(cur - 1, 0)
    return out


def star(adj: list[list[int]], sequence: list[int], stop: int = -1) -> list[int] | None:
    """Greedy star colouring in ``sequence`` (``gradarg.sparse.star._star``): ``v`` may not
    take the colour of a coloured neighbour ``w``, nor that of a coloured neighbour ``x`` of
    ``w`` when ``w``'s colour appears twice among the neighbours of ``v`` (``u–v–w–x``) or of
    ``x`` (``v–w–x–y``).  ``None`` as soon as a vertex needs colour ``stop - 1``
    (``stop < 0``: never)."""
    n = len(adj)
    color = [-1] * n
    get = color.__getitem__
    # colours around a vertex, those seen twice; one shared empty set until the first one
    once = cast("list[set[int]]", [_EMPTY] * n)
    twice = cast("list[set[int]]", [_EMPTY] * n)
    for v in sequence:
        forbid = set()
        hub = twice[v]
        for w in adj[v]:
            a = color[w]
            if a < 0:
                continue
            forbid.add(a)
            if a in hub:  # u–v–w–x: every coloured neighbour x of w
                forbid.update(map(get, adj[w]))
            else:  # v–w–x–y: those x with a twice among their neighbours
                forbid.update([color[x] for x in adj[w] if a in twice[x]])
        c = 0
        while c in forbid:
            c += 1
        if 0 <= stop <= c + 1:
            return None
        color[v] = c
        for z in adj[v]:
            seen = once[z]
            if c in seen:
                more = twice[z]
                if more is _EMPTY:
                    twice[z] = {c}
                else:
                    more.add(c)
            elif seen is _EMPTY:
                once[z] = {c}
            else:
                seen.add(c)
    return color


_EMPTY: frozenset[int] = frozenset()
