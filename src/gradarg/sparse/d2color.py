"""Partial distance-2 colouring of the rows or columns of a pattern, on its CSR and CSC arrays.

Two columns conflict when they share a row: in the bipartite graph of the pattern (rows on one
side, columns on the other) they are at distance 2.  Colouring the columns so that no two at
distance 2 share a colour is a proper colouring of the column intersection graph, found here
without building that graph: the distance-2 neighbours of column ``v`` are visited through
the CSC array (the rows of ``v``) and the CSR array (the columns of each such row), and a
forbidden-colour array stamped with ``v`` marks the colours they use (Gebremedhin, Manne and
Pothen, "What color is your Jacobian?", SIAM Review 47 (2005), section 3.3, partial
distance-2 colouring; as in SparseMatrixColorings.jl and asdex).  Rows work the same way with
the arrays swapped.  The work is ``Σ_r nnz(r)²`` over the rows ``r`` (for columns): linear in
the non-zeros when lines are short; dense lines belong to ``gradarg.sparse.peel`` first.

Vertex orders and colourings:

* ``largest_first``: greedy in decreasing distance-2 degree (ties by index), the order of
  ``networkx.greedy_color(strategy="largest_first")`` on the intersection graph: the same
  colouring as the explicit graph gives;
* ``DSATUR``: next the uncoloured vertex with most distinct colours among its distance-2
  neighbours, ties by most uncoloured neighbours, then first come (Brélaz, Comm. ACM 22,
  1979), with per-vertex sets of neighbour colours (bits, or hash tables past 256 colours)
  and a bucket queue (:mod:`gradarg.sparse._buckets`; a binary heap when the degrees are too
  large for one bucket per key), both around one DSATUR step (:func:`_colour_next`);
* ``best``: first the colourings of :mod:`gradarg.sparse.lowerbound` (``v mod k``, then
  ``a · index(v) mod k`` over the vertices' shape, ``k`` the most entries in one line: optimal
  when proper; bands, blocks, grid stencils such as Gray–Scott's, 6 colours where the searches
  find 10), skipped when a path is forced, so that the path's own kernels run; else
  largest-first, then DSATUR unless
  largest-first already meets the lower bound; the fewer colours (largest-first on a tie).
  On 1,200 random patterns up to 40 × 40 this found fewer colours than the former ``best``
  (largest-first and rustworkx's DSATUR on an explicit graph) once, one more in 4 (DSATUR's
  ties broken differently); never more on the shared test problems (tests/sparse).

Where it runs (:data:`gradarg.sparse._numba.PATHS`): the loops below are compiled by numba
(:mod:`gradarg.sparse._numba`), which costs 0.4–0.65 s to load in a fresh process; until numba
pays for itself (:func:`gradarg.sparse._numba.use_numba`), the explicit distance-2 graph is
built by vectorised NumPy (:func:`gradarg.sparse._pycolor.distance2_graph`) and coloured by
the interpreted loops (:mod:`gradarg.sparse._pycolor`: the compiled colourings bit for bit).
A third path, forced only (``colouring_path("rustworkx")``), colours that graph with
rustworkx's compiled ``graph_greedy_color`` (:mod:`gradarg.sparse._rxcolor`: its ``Degree`` strategy is
our largest-first exactly, its ``Saturation`` a DSATUR with other tie-breaks).  It is not the
default because, measured (``benchmarks/coloring.py --paths``, ``benchmarks/first_call.py
--cpu``; one thread, process CPU time, a loaded 2-core machine), handing the graph to
rustworkx (a Python list of edge tuples, then ``PyGraph``) costs about what the interpreted
largest-first costs: its largest-first took 0.6–1.3× the interpreted one's time (slower from
about 25,000 edges on: Gray-Scott 7.9 against 6.8 ms, block-tridiagonal 256 × 8 8.9 against
5.5 ms), its DSATUR 0.4–0.75× ours on the same graphs but up to 1.8× on a random 3000 × 3000
pattern with 5 entries a row; whole constructions in a fresh process came out from 0.7× (a
block-tridiagonal pattern) to 1.6× (Burgers, rustworkx's import) the interpreted ones; and its
DSATUR's colours differ from ours by one either way on about one pattern in ten of random
patterns of 50–1500 lines, so it would not keep "never more colours than today".
"""

from __future__ import annotations

import time

import numpy as np

from . import _pycolor
from ._buckets import append, unlink
from ._numba import forced_path, interpreted, lazy_njit, note_path, use_numba
from ._rxcolor import RustworkxColouring, rustworkx_seconds
from .lowerbound import lattice, modular
from .pattern import Coordinates

__all__ = ["BEST_OF", "bipartite", "color_bipartite", "color_side"]

BEST_OF = ("largest_first", "DSATUR")


def bipartite(coords: Coordinates, side: str
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(pa, ia, pb, ib)``: the vertices' lines (``pa``/``ia``, CSR for ``side="rows"``, CSC
    for ``"columns"``) and the other side's (CSC, resp. CSR), ``int64``.  The transpose is the
    compiled counting sort once numba is loaded, else one ``np.sort`` of keys
    (:func:`gradarg.sparse._pycolor.transpose`), the same arrays; kept in ``coords.derived``
    per path (one transpose for the rows, the symmetry check and the columns)."""
    if side not in ("rows", "columns"):
        raise ValueError(f"side must be 'rows' or 'columns', got {side!r}")
    compiled = use_numba(0.0)
    arrays = coords.derived.get(("bipartite", compiled))
    if arrays is None:
        rptr = np.zeros(coords.m + 1, dtype=np.int64)
        np.cumsum(np.bincount(coords.rows, minlength=coords.m), out=rptr[1:])
        rind = np.ascontiguousarray(coords.cols, dtype=np.int64)  # row-major: CSR already
        if compiled:
            cptr, cind = _transpose(rptr, rind, coords.n)
        else:
            with interpreted():
                cptr, cind = _pycolor.transpose(rptr, rind, coords.n)
        arrays = coords.derived[("bipartite", compiled)] = (rptr, rind, cptr, cind)
    return arrays if side == "rows" else (arrays[2], arrays[3], arrays[0], arrays[1])


class _Compiled:
    """The kernels of one distance-2 colouring, compiled (numba)."""

    path = "numba"

    def __init__(self, pa, ia, pb, ib) -> None:
        self.arrays = (pa, ia, pb, ib)

    def degrees(self) -> np.ndarray:
        return _degrees(*self.arrays)

    def largest_first(self, degree: np.ndarray) -> np.ndarray:
        return _greedy(*self.arrays, np.argsort(-degree, kind="stable"))

    def dsatur(self, degree: np.ndarray) -> np.ndarray | None:
        buckets = _dsatur_queue(degree)
        if buckets is None:
            return None
        return (_dsatur_buckets if buckets else _dsatur)(*self.arrays, degree)


class _Interpreted:
    """The same kernels numba-free (:mod:`gradarg.sparse._pycolor`), on the explicit distance-2
    graph ``(ptr, ind)``."""

    path = "python"

    def __init__(self, ptr, ind) -> None:
        self.degree = np.diff(ptr)
        self.adj = _pycolor.adjacency(ptr, ind)

    def degrees(self) -> np.ndarray:
        return self.degree

    def largest_first(self, degree: np.ndarray) -> np.ndarray:
        order = np.argsort(-degree, kind="stable").tolist()
        return np.array(_pycolor.greedy(self.adj, order), dtype=np.int64)

    def dsatur(self, degree: np.ndarray) -> np.ndarray | None:
        buckets = _dsatur_queue(degree)
        if buckets is None:
            return None
        run = _pycolor.dsatur_buckets if buckets else _pycolor.dsatur_heap
        return np.array(run(self.adj, degree.tolist()), dtype=np.int64)


def _dsatur_queue(degree: np.ndarray) -> bool | None:
    """Which queue our DSATUR takes: buckets (``True``: one per key, ``(span² + nv)`` words),
    the binary heap (``False``: its packed keys fit in ``int64``), or neither (``None``)."""
    nv = degree.size
    span = int(degree.max(initial=0)) + 2
    if span * span <= 8 * nv + 65536:
        return True
    if span * span * nv < 2**62:
        return False
    return None


def color_bipartite(
    pa, ia, pb, ib, strategy: str = "best", shape: tuple[int, ...] | None = None
) -> tuple[np.ndarray, dict[str, tuple[int, float]]]:
    """Colour the vertices of ``(pa, ia)`` at distance 2 through ``(pb, ib)``.

    ``strategy`` is ``"best"`` or one of :data:`BEST_OF`; ``"best"`` first tries
    :func:`modular` and, given the vertices' ``shape``, :func:`lattice` (optimal when found;
    not when a path is forced).  Returns the ``int64``
    colours and, per colouring run, ``(colours used, seconds)``.  Compiled (numba) when
    :func:`gradarg.sparse._numba.use_numba` says so, else interpreted on the explicit graph
    (numba's colours bit for bit), or, when forced (``colouring_path("rustworkx")``), by
    rustworkx on that graph (largest-first the same colouring; DSATUR's ties broken
    otherwise).
    """
    if strategy not in ("best", *BEST_OF):
        raise ValueError(f"strategy must be 'best' or one of {BEST_OF}, got {strategy!r}")
    nv = len(pa) - 1
    if nv == 0:
        return np.zeros(0, dtype=np.int64), {}
    start = time.perf_counter()
    # a colouring that meets the lower bound is optimal: no search (skipped when a path is
    # forced, so that the forced path's own kernels run)
    if strategy == "best" and forced_path() is None:
        for name, find in (("modular", lambda: modular(pb, ib, nv)),
                           ("lattice", lambda: None if shape is None else lattice(pb, ib, shape))):
            colors = find()
            if colors is not None:
                note_path(name)
                return colors, {name: (int(colors.max()) + 1, time.perf_counter() - start)}
    # without numba: first the graph (vectorised; its cost known from the line lengths), then
    # the interpreted loops on it (or, forced, rustworkx's colourings), unless numba is
    # estimated cheaper (ski rental, gradarg.sparse._numba.use_numba)
    interpret = forced_path() != "rustworkx"
    if not use_numba(lambda: _pycolor.distance2_graph_seconds(pa, ia, pb)):
        with interpreted():
            ptr, ind = _pycolor.distance2_graph(pa, ia, pb, ib)
        if not use_numba(lambda: _pycolor.distance2_seconds(ptr, ind) if interpret
                         else rustworkx_seconds(ptr)):
            with interpreted():
                run = _Interpreted(ptr, ind) if interpret else RustworkxColouring(ptr, ind)
                return _color_with(run, pb, strategy, start)
    return _color_with(_Compiled(pa, ia, pb, ib), pb, strategy, start)


def _color_with(run: _Compiled | _Interpreted | RustworkxColouring, pb, strategy: str, start: float
                ) -> tuple[np.ndarray, dict[str, tuple[int, float]]]:
    note_path(run.path)
    tried: dict[str, tuple[int, float]] = {}
    degree = run.degrees()
    lower = int(np.diff(pb).max(initial=1))  # a line's entries need distinct colours
    best = None
    for name in BEST_OF if strategy == "best" else (strategy,):
        colors = run.largest_first(degree) if name == "largest_first" else run.dsatur(degree)
        if colors is None:
            continue
        k = int(colors.max()) + 1
        now = time.perf_counter()
        tried[name] = (k, now - start)
        start = now
        if best is None or k < int(best.max()) + 1:
            best = colors
        if int(best.max()) + 1 <= lower:  # optimal: nothing to gain from another order
            break
    if best is None:
        best = run.largest_first(degree)
    return best, tried


def color_side(
    coords: Coordinates, side: str, strategy: str = "best"
) -> tuple[np.ndarray, dict[str, tuple[int, float]]]:
    """Colour the rows (``side="rows"``) or the columns of ``coords`` (see
    :func:`color_bipartite`; their shape, when known, for :func:`lattice`)."""
    shape = coords.y_shape if side == "rows" else coords.x_shape
    return color_bipartite(*bipartite(coords, side), strategy, shape)


# --------------------------------------------------------------------------- compiled loops


@lazy_njit
def _transpose(ptr, ind, n):  # pragma: no cover - compiled
    """CSC of a CSR pattern (counting sort; rows stay sorted within each column)."""
    m = ptr.size - 1
    count = np.zeros(n + 1, dtype=np.int64)
    for p in range(ind.size):
        count[ind[p] + 1] += 1
    for j in range(n):
        count[j + 1] += count[j]
    tptr = count.copy()
    tind = np.empty(ind.size, dtype=np.int64)
    for i in range(m):
        for p in range(ptr[i], ptr[i + 1]):
            j = ind[p]
            tind[count[j]] = i
            count[j] += 1
    return tptr, tind


@lazy_njit
def _degrees(pa, ia, pb, ib):  # pragma: no cover - compiled
    nv = pa.size - 1
    mark = np.full(nv, -1, dtype=np.int64)
    degree = np.zeros(nv, dtype=np.int64)
    for v in range(nv):
        mark[v] = v
        d = 0
        for p in range(pa[v], pa[v + 1]):
            w = ia[p]
            for q in range(pb[w], pb[w + 1]):
                x = ib[q]
                if mark[x] != v:
                    mark[x] = v
                    d += 1
        degree[v] = d
    return degree


@lazy_njit
def _greedy(pa, ia, pb, ib, order):  # pragma: no cover - compiled
    """Each vertex in ``order`` takes the smallest colour no distance-2 neighbour has."""
    nv = pa.size - 1
    color = np.full(nv, -1, dtype=np.int64)
    forbid = np.full(nv + 1, -1, dtype=np.int64)
    for t in range(order.size):
        v = order[t]
        for p in range(pa[v], pa[v + 1]):
            w = ia[p]
            for q in range(pb[w], pb[w + 1]):
                c = color[ib[q]]
                if c >= 0:
                    forbid[c] = v
        c = 0
        while forbid[c] == v:
            c += 1
        color[v] = c
    return color


@lazy_njit
def _colour_sets(degree, span):  # pragma: no cover - compiled
    """Per vertex, a set of the distinct colours of its distance-2 neighbours (colours are
    below ``span``): ``words`` bits of ``int64`` each when ``span <= 256`` (small and cache
    friendly), else an open-addressing table of at least twice its degree at ``start[v]``."""
    nv = degree.size
    words = (span + 63) // 64
    if words <= 4:
        return np.zeros(nv * words, dtype=np.int64), np.zeros(1, dtype=np.int64), words
    start = np.zeros(nv + 1, dtype=np.int64)
    for v in range(nv):
        cap = 1
        while cap < 2 * degree[v]:
            cap *= 2
        start[v + 1] = start[v] + cap
    return np.full(start[nv], -1, dtype=np.int64), start, 0


@lazy_njit(inline=True)
def _set_has(table, start, words, v, c):  # pragma: no cover - compiled
    if words:
        return (table[v * words + (c >> 6)] >> (c & 63)) & 1 == 1
    mask = start[v + 1] - start[v] - 1
    h = (c * 40503) & mask
    while True:
        k = table[start[v] + h]
        if k == c:
            return True
        if k < 0:
            return False
        h = (h + 1) & mask


@lazy_njit(inline=True)
def _set_add(table, start, words, v, c):  # pragma: no cover - compiled
    """Insert colour ``c`` into ``v``'s set; True if it was not there."""
    if words:
        i = v * words + (c >> 6)
        bit = 1 << (c & 63)
        if table[i] & bit:
            return False
        table[i] |= bit
        return True
    mask = start[v + 1] - start[v] - 1
    h = (c * 40503) & mask
    while True:
        k = table[start[v] + h]
        if k == c:
            return False
        if k < 0:
            table[start[v] + h] = c
            return True
        h = (h + 1) & mask


@lazy_njit(inline=True)
def _heap_push(heap, size, key):  # pragma: no cover - compiled
    """Max-heap of int64 keys in ``heap[:size]``; returns the (possibly grown) array."""
    if size == heap.size:
        bigger = np.empty(2 * heap.size, dtype=np.int64)
        bigger[:size] = heap[:size]
        heap = bigger
    i = size
    heap[i] = key
    while i > 0:
        parent = (i - 1) >> 1
        if heap[parent] >= heap[i]:
            break
        heap[parent], heap[i] = heap[i], heap[parent]
        i = parent
    return heap


@lazy_njit(inline=True)
def _heap_pop(heap, size):  # pragma: no cover - compiled
    top = heap[0]
    size -= 1
    heap[0] = heap[size]
    i = 0
    while True:
        left = 2 * i + 1
        if left >= size:
            break
        big = left
        if left + 1 < size and heap[left + 1] > heap[left]:
            big = left + 1
        if heap[i] >= heap[big]:
            break
        heap[i], heap[big] = heap[big], heap[i]
        i = big
    return top


@lazy_njit(inline=True)
def _dsatur_start(degree):  # pragma: no cover - compiled
    """DSATUR's state: ``span`` (keys are ``saturation * span + uncoloured neighbours``), the
    sets of neighbour colours, the colours (``-1``: none yet), the keys (saturation 0), the
    stamps of the neighbours visited, a buffer for the vertices :func:`_colour_next` raises."""
    nv = degree.size
    span = 2
    for v in range(nv):
        span = max(span, degree[v] + 2)
    table, start, words = _colour_sets(degree, span)
    return (span, table, start, words, np.full(nv, -1, dtype=np.int64), degree.copy(),
            np.full(nv, -1, dtype=np.int64), np.empty(nv, dtype=np.int64))


@lazy_njit(inline=True)
def _colour_next(v, pa, ia, pb, ib, span, table, start, words, color, key, mark,
                 raised):  # pragma: no cover - compiled
    """DSATUR's step, whatever the queue: ``v`` takes the smallest colour none of its
    distance-2 neighbours has; each uncoloured neighbour has one uncoloured neighbour fewer
    (its key falls by 1) and, when the colour is new among its neighbours, one colour more
    (its key rises by ``span``): those are written to ``raised[:k]``, in visiting order, for
    the queue to move up.  Returns ``k``."""
    c = 0
    while _set_has(table, start, words, v, c):
        c += 1
    color[v] = c
    mark[v] = v
    k = 0
    for p in range(pa[v], pa[v + 1]):
        w = ia[p]
        for q in range(pb[w], pb[w + 1]):
            x = ib[q]
            if mark[x] == v:
                continue
            mark[x] = v
            if color[x] >= 0:
                continue
            key[x] -= 1
            if _set_add(table, start, words, x, c):
                key[x] += span
                raised[k] = x
                k += 1
    return k


@lazy_njit
def _dsatur(pa, ia, pb, ib, degree):  # pragma: no cover - compiled
    """DSATUR with a binary heap of ``key * nv + (nv - 1 - v)`` (the largest key, ties by
    lowest index; for a degree too large for one bucket per key).  Entries only overestimate
    (uncoloured counts fall): a stale one is pushed again with its vertex's true key."""
    nv = pa.size - 1
    span, table, start, words, color, key, mark, raised = _dsatur_start(degree)
    heap = np.empty(max(16, 2 * nv), dtype=np.int64)
    size = 0
    for v in range(nv):
        heap = _heap_push(heap, size, key[v] * nv + (nv - 1 - v))
        size += 1
    for _ in range(nv):
        v = -1
        while True:
            top = _heap_pop(heap, size)
            size -= 1
            v = nv - 1 - top % nv
            if color[v] >= 0:
                continue
            now = key[v] * nv + (nv - 1 - v)
            if top == now:
                break
            heap = _heap_push(heap, size, now)
            size += 1
        raised_k = _colour_next(v, pa, ia, pb, ib, span, table, start, words, color, key,
                                mark, raised)
        for i in range(raised_k):  # a higher key: pushed now
            heap = _heap_push(heap, size, key[raised[i]] * nv + (nv - 1 - raised[i]))
            size += 1
    return color


@lazy_njit
def _dsatur_buckets(pa, ia, pb, ib, degree):  # pragma: no cover - compiled
    """DSATUR with a bucket queue (:mod:`gradarg.sparse._buckets`): one list per key, first
    in, first out within a key (vertices enter in index order), the largest key next.  A
    vertex moves up when its saturation grows; when its uncoloured count falls it stays where
    it is until it reaches the front, then moves down to its true key."""
    nv = pa.size - 1
    span, table, start, words, color, key, mark, raised = _dsatur_start(degree)
    where = degree.copy()  # the bucket each vertex sits in (>= its key)
    head = np.full(span * span, -1, dtype=np.int64)
    tail = np.full(span * span, -1, dtype=np.int64)
    nxt = np.full(nv, -1, dtype=np.int64)
    prv = np.full(nv, -1, dtype=np.int64)
    cur = 0
    for v in range(nv):
        append(head, tail, nxt, prv, key[v], v)
        cur = max(cur, key[v])
    for _ in range(nv):
        v = -1
        while True:
            while head[cur] < 0:
                cur -= 1
            v = head[cur]
            unlink(head, tail, nxt, prv, cur, v)
            if where[v] == key[v]:
                break
            where[v] = key[v]
            append(head, tail, nxt, prv, key[v], v)
        raised_k = _colour_next(v, pa, ia, pb, ib, span, table, start, words, color, key,
                                mark, raised)
        for i in range(raised_k):
            x = raised[i]
            unlink(head, tail, nxt, prv, where[x], x)
            where[x] = key[x]
            append(head, tail, nxt, prv, key[x], x)
            cur = max(cur, key[x])
    return color
