"""Star colouring of a symmetric pattern, and direct recovery of a Hessian from ``H S``.

A symmetric ``n × n`` pattern is the **adjacency graph** of its off-diagonal entries.  A
*star colouring* is a proper colouring in which every path on four vertices uses at least three
colours (no two-coloured path ``P4``).  With a star colouring, every off-diagonal entry
``H[i, j]`` is read directly from the compressed product ``B = H S`` (``S[:, c]`` the sum of the
unit vectors of colour ``c``; one Hessian-vector product per colour): ``H[i, j] = B[i, c(j)]``
when ``j`` is the only neighbour of ``i`` with colour ``c(j)``, otherwise ``H[i, j] = B[j, c(i)]``
(then ``i`` is the only neighbour of ``j`` with colour ``c(i)``); ``H[i, i] = B[i, c(i)]``.  See
Gebremedhin, Manne and Pothen, "What color is your Jacobian?", SIAM Review 47 (2005),
section 4, and Gebremedhin, Tarafdar, Manne and Pothen, "New acyclic and star coloring
algorithms with application to computing Hessians", SIAM J. Sci. Comput. 29 (2007).

The greedy rule here is exact for a partial colouring: when vertex ``v`` is coloured, every
``P4`` through ``v`` whose other three vertices are coloured is checked (``v`` at an end:
``v–w–x–y`` with ``c(y) = c(w)`` forbids ``c(x)``; ``v`` inside: ``u–v–w–x`` with
``c(u) = c(w)`` forbids ``c(x)``), using, per vertex, the count of its neighbours of each colour.
Every ``P4`` is checked when its last vertex is coloured, so the result is a star colouring.
The loop is compiled by numba on first use (:mod:`gradarg.sparse._numba`): the former
pure-Python loop took 113 ms on a 64 × 64 grid energy (three orders), the compiled one 1 ms.
Before numba is loaded, small graphs are coloured by :func:`gradarg.sparse._pycolor.star`
(Python sets of the colours seen once and twice around each vertex: the same colours, about
8 ms per order on that grid) rather than paying numba's start-up.

``SparseHessian`` colours through :mod:`gradarg.sparse.starfast`: structured colourings
checked here (:func:`star_conflict`, exactly the star colourings), the greedy colouring
stopped as soon as it needs as many colours (``limit``) to prove them no worse.
"""

from __future__ import annotations

import numpy as np

from . import _pycolor
from ._numba import interpreted, lazy_njit, use_numba
from .greedy import order

__all__ = ["StarColourer", "star_coloring", "star_conflict", "star_recovery"]


def star_coloring(indptr: np.ndarray, indices: np.ndarray, sequence: np.ndarray,
                  limit: int | None = None) -> np.ndarray | None:
    """Greedy star colouring of the graph ``(indptr, indices)`` in the vertex order ``sequence``.

    Compiled by numba (per vertex, the count of its neighbours of each colour is an
    open-addressing table of twice its degree, at most that many distinct colours), or
    interpreted with Python sets (:func:`gradarg.sparse._pycolor.star`, the same colours) as
    :func:`gradarg.sparse._numba.use_numba` decides.  Returns ``int64`` colours.

    ``limit``: stop as soon as a vertex needs colour ``limit - 1`` (the colouring would use
    at least ``limit`` colours) and return ``None``.  The greedy colouring of the first ``t``
    vertices of ``sequence`` depends on those vertices only, so stopping early says exactly
    that the whole colouring would use ``limit`` colours or more (``gradarg.sparse.starfast``
    proves a colouring found otherwise no worse this way).
    """
    return StarColourer(indptr, indices)(sequence, limit)


class StarColourer:
    """:func:`star_coloring` of one graph in several orders, the graph prepared once: numba's
    ``int64`` arrays, or the interpreter's lists of neighbours (as
    :func:`gradarg.sparse._numba.use_numba` decides when it is made)."""

    def __init__(self, indptr: np.ndarray, indices: np.ndarray) -> None:
        self.n = len(indptr) - 1
        self.compiled = use_numba(
            lambda: _pycolor.star_seconds(np.asarray(indptr), np.asarray(indices)))
        self.ptr = np.ascontiguousarray(indptr, dtype=np.int64)
        self.ind = np.ascontiguousarray(indices, dtype=np.int64)
        self._adj: list[list[int]] | None = None

    @property
    def adj(self) -> list[list[int]]:
        """The interpreter's lists of neighbours, made on first use (inside the caller's
        :func:`gradarg.sparse._numba.interpreted` block, when there is one)."""
        if self._adj is None:
            with interpreted():
                self._adj = _pycolor.adjacency(self.ptr, self.ind)
        return self._adj

    def __call__(self, sequence: np.ndarray | list[int], limit: int | None = None
                 ) -> np.ndarray | None:
        stop = -1 if limit is None else int(limit)
        if not self.compiled:
            with interpreted():
                seq = sequence if isinstance(sequence, list) else np.asarray(sequence).tolist()
                colors = _pycolor.star(self.adj, seq, stop)
                return None if colors is None else np.array(colors, dtype=np.int64)
        found = _star(self.ptr, self.ind, np.ascontiguousarray(sequence, dtype=np.int64), stop)
        return None if found.size == 0 and self.n > 0 else found

    def smallest_last(self) -> np.ndarray | list[int]:
        """The smallest-last order (:func:`gradarg.sparse.greedy.order`'s, the same order):
        an array when compiled; interpreted, a list from the lists already made, which
        :meth:`__call__` takes as it is (no round trip through an array: about 0.3 ms of a
        64 × 64 grid's 1.7 ms order)."""
        if self.compiled:
            return order(self.ptr, self.ind, "smallest_last")
        with interpreted():
            removal = _pycolor.smallest_last_removal(self.adj, np.diff(self.ptr).tolist())
            removal.reverse()
            return removal


@lazy_njit
def _slot(keys, start, mask, c):  # pragma: no cover - compiled
    """Position of colour ``c`` in the table at ``keys[start : start + mask + 1]`` (or of the
    empty slot where it would go)."""
    h = (c * 40503) & mask
    while keys[start + h] >= 0 and keys[start + h] != c:
        h = (h + 1) & mask
    return start + h


@lazy_njit
def _count(keys, counts, start, mask, c):  # pragma: no cover - compiled
    at = _slot(keys, start, mask, c)
    return counts[at] if keys[at] == c else 0


@lazy_njit
def _star(ptr, ind, sequence, stop):  # pragma: no cover - compiled
    """The greedy star colouring; an empty array as soon as a vertex needs colour
    ``stop - 1`` (``stop < 0``: never)."""
    n = ptr.size - 1
    cap = np.ones(n, dtype=np.int64)
    for v in range(n):
        while cap[v] < 2 * (ptr[v + 1] - ptr[v]):
            cap[v] *= 2
    start = np.zeros(n + 1, dtype=np.int64)
    for v in range(n):
        start[v + 1] = start[v] + cap[v]
    keys = np.full(start[n], -1, dtype=np.int64)  # vertex z, colour a -> neighbours of z
    counts = np.zeros(start[n], dtype=np.int64)  # with colour a
    color = np.full(n, -1, dtype=np.int64)
    forbid = np.full(n + 1, -1, dtype=np.int64)
    for t in range(sequence.size):
        v = sequence[t]
        for p in range(ptr[v], ptr[v + 1]):
            w = ind[p]
            a = color[w]
            if a < 0:
                continue
            forbid[a] = v
            # u–v–w–x with c(u) = c(w): no neighbour x of w may share c(v)
            hub = _count(keys, counts, start[v], cap[v] - 1, a) >= 2
            for q in range(ptr[w], ptr[w + 1]):
                x = ind[q]
                cx = color[x]
                if cx < 0 or x == v:
                    continue
                if hub or _count(keys, counts, start[x], cap[x] - 1, a) >= 2:  # v–w–x–y
                    forbid[cx] = v
        c = 0
        while forbid[c] == v:
            c += 1
        if 0 <= stop <= c + 1:
            return color[:0]
        color[v] = c
        for p in range(ptr[v], ptr[v + 1]):
            z = ind[p]
            at = _slot(keys, start[z], cap[z] - 1, c)
            keys[at] = c
            counts[at] += 1
    return color


def star_recovery(rows: np.ndarray, cols: np.ndarray, colors: np.ndarray) -> np.ndarray:
    """Flat positions in ``Bᵀ`` (``passes × n``, row ``c`` the product with colour ``c``'s seed)
    of every entry ``(rows[k], cols[k])`` of a symmetric pattern (diagonal included).

    Raises ``ValueError`` if ``colors`` is not a star colouring of the pattern (some entry
    cannot be read directly).
    """
    n = colors.size
    direct, mirror = _readable(rows, cols, colors)
    if not bool(np.all(direct | mirror)):
        k = int(np.flatnonzero(~(direct | mirror))[0])
        raise ValueError(
            f"the colouring is not a star colouring: entry ({rows[k]}, {cols[k]}) shares its "
            f"colour group in both its row and its column"
        )
    return np.where(direct, colors[cols] * n + rows, colors[rows] * n + cols)


def _readable(rows: np.ndarray, cols: np.ndarray, colors: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
    """Per entry: readable in its row (``(i, j)``: ``j`` the only column of row ``i`` with
    colour ``c(j)``), in its column (``i`` the only one of row ``j`` with colour ``c(i)``)."""
    n = colors.size
    passes = int(colors.max()) + 1
    per = np.bincount(rows * passes + colors[cols], minlength=n * passes)  # row i, colour c
    return per[rows * passes + colors[cols]] == 1, per[cols * passes + colors[rows]] == 1


def star_conflict(rows: np.ndarray, cols: np.ndarray, colors: np.ndarray) -> int | None:
    """The first entry ``k`` of the symmetric pattern ``(rows, cols)`` (diagonal included)
    that ``colors`` does not let :func:`star_recovery` read directly, or ``None``.

    ``None`` exactly when ``colors`` is a star colouring of the pattern's adjacency graph: two
    neighbours of one colour make their entry ``(i, j)`` unreadable (row ``i`` then holds ``i``
    and ``j`` in one colour, and row ``j`` too); and an entry ``(i, j)`` is unreadable both
    ways exactly when ``i`` has another neighbour ``k`` of colour ``c(j)`` and ``j`` another
    neighbour ``l`` of colour ``c(i)``: the path ``k–i–j–l`` on two colours (Gebremedhin,
    Manne and Pothen, SIAM Review 47 (2005), section 4.1).  ``O(nnz)``, vectorised.
    """
    if colors.size == 0 or rows.size == 0:
        return None
    direct, mirror = _readable(rows, cols, colors)
    bad = np.flatnonzero(~(direct | mirror))
    return int(bad[0]) if bad.size else None
