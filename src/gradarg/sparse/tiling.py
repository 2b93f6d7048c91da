"""Periodic star colourings of stencils on grids: one table of colours over a small tile,
repeated over the grid.

A Hessian whose pattern is a stencil on the input's grid (vertex ``x``, a multi-index, adjacent
to ``x + o`` for each offset ``o`` of a set ``S = -S``, cut at the grid's boundary) is star
coloured by any colouring ``c(x) = T[x mod p]`` of the infinite lattice that is a star
colouring there: the grid's graph is a subgraph of the lattice's, and a star colouring of a
graph is one of each subgraph.  On the lattice that holds exactly when

* ``T[t] != T[t + o mod p]`` for every cell ``t`` of the tile and ``o`` in ``S`` (proper), and
* no path ``x0–x1–x2–x3`` on four distinct lattice points with steps in ``S`` has ``c(x0) =
  c(x2)`` and ``c(x1) = c(x3)`` (Gebremedhin, Manne and Pothen, "What color is your
  Jacobian?", SIAM Review 47 (2005), section 4.1: no path on four vertices in two colours).

A path is fixed, up to a translation by the period, by the cell of ``x0`` and its three
steps, so both are finitely many checks on ``T``.  :func:`tile_search` decides them by
backtracking; it takes milliseconds to seconds per tile, too slow to run on every
``SparseHessian``, so its results are kept in :data:`CATALOGUE`, and :func:`colour` only looks
the pattern's stencil up there, up to the grid's symmetries (a permutation of the axes and a
sign per axis map a star colouring of one lattice onto one of the image lattice), in well
under a millisecond.  ``tests/sparse/test_tiling.py`` runs the search again for every entry
and checks each on whole grids against the definition.

The entries: the 7-point stencil of a triangulated grid (P1 finite elements in 2-D; the
minimal-surface energy of the benchmarks), a triangular lattice: its distance-2 colourings
take 7 colours (:func:`gradarg.sparse.lowerbound.lattice`), the greedy star colourings 9, a
3 × 6 tile 6, and no star colouring of a ball of 16 of its vertices has 5
(:func:`gradarg.sparse.starbound.needs_at_least`): one Hessian-vector product fewer per call,
and no greedy search.  The 15-point stencil of a grid of cubes cut into six tetrahedra each
(P1 elements in 3-D, Kuhn's triangulation): 14 colours on a 4 × 3 × 3 tile, where the greedy
orders take 17 (and distance-2 colourings at least 15); not proved optimal (the search found
no 13-colour tile of 60 cells or fewer), so the greedy orders still run, stopped as soon as
they need 14.  The search found no 6-colour tile of the 3-D 7-point stencil and no 8-colour
tile of the 9-point stencil with 40 cells or fewer (their distance-2 lattice colourings, 7
and 9, stay).

Imports NumPy, the standard library and :func:`gradarg.sparse.starbound.backtrack`.
"""

from __future__ import annotations

import itertools
from typing import NamedTuple

import numpy as np

from .starbound import backtrack

__all__ = ["CATALOGUE", "Tile", "colour", "stencil_offsets", "tile_search"]


class Tile(NamedTuple):
    """A periodic star colouring of the lattice with steps ``offsets`` (each with its
    negative): vertex ``x`` takes ``table[x mod period]`` (``table``: the tile's colours in
    row-major order, ``prod(period)`` of them).  ``proved``: whether
    :func:`gradarg.sparse.starbound.needs_at_least` proves that no star colouring of the
    lattice has fewer colours (then ``SparseHessian`` runs no greedy search)."""

    offsets: frozenset[tuple[int, ...]]
    period: tuple[int, ...]
    table: tuple[int, ...]
    proved: bool


def _steps(*steps: tuple[int, ...]) -> frozenset[tuple[int, ...]]:
    """The steps with their negatives."""
    return frozenset(steps) | frozenset(tuple(-a for a in o) for o in steps)


CATALOGUE: tuple[Tile, ...] = (
    # a grid of squares each cut along one diagonal: 6 colours (distance-2: 7; greedy: 9)
    Tile(_steps((1, 0), (0, 1), (1, -1)), (3, 6),
         (0, 1, 0, 2, 0, 3, 4, 3, 4, 1, 4, 2, 5, 2, 5, 3, 5, 1), True),
    # a grid of cubes each cut into 6 tetrahedra about one diagonal: 14 colours
    # (distance-2: 15; greedy: 17)
    Tile(_steps((1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 0), (0, 1, 1), (1, 1, 1)), (4, 3, 3),
         (0, 1, 2, 1, 3, 4, 5, 6, 1, 7, 8, 9, 8, 10, 11, 12, 13, 8,
          0, 1, 2, 3, 4, 0, 5, 0, 6, 11, 9, 7, 8, 10, 11, 13, 11, 12), False),
)
"""Periodic star colourings found by :func:`tile_search` (tested: each a star colouring of
its lattice, found again by the search, and ``proved`` exactly when the bound proves it)."""


def stencil_offsets(ptr: np.ndarray, cols: np.ndarray, shape: tuple[int, ...]
                    ) -> frozenset[tuple[int, ...]]:
    """The nonzero multi-index offsets ``index(w) - index(v)`` of the longest row ``v`` of the
    pattern ``(ptr, cols)`` (vertices numbered row-major over ``shape``), with their
    negatives.  Other rows may hold other offsets: a colouring made from these is checked on
    the whole pattern by the caller."""
    v = int(np.argmax(np.diff(ptr)))
    here = np.array(np.unravel_index(v, shape), dtype=np.int64)
    there = np.array(np.unravel_index(cols[ptr[v]:ptr[v + 1]], shape), dtype=np.int64).T
    return _steps(*(tuple(o) for o in (there - here).tolist() if any(o)))


def _symmetries(dims: int):
    """Every signed permutation of ``dims`` axes, as ``(axes, signs)``: the point ``x`` maps
    to ``y`` with ``y[i] = signs[i] * x[axes[i]]``."""
    for axes in itertools.permutations(range(dims)):
        for signs in itertools.product((1, -1), repeat=dims):
            yield axes, signs


def colour(ptr: np.ndarray, cols: np.ndarray, shape: tuple[int, ...]) -> np.ndarray | None:
    """The periodic colouring of a :data:`CATALOGUE` entry whose stencil is the pattern's (up
    to a signed permutation of the axes), or ``None``.

    Parameters
    ----------
    ptr, cols : numpy.ndarray
        ``int64`` compressed rows of the symmetric pattern, each row's diagonal included:
        ``cols[ptr[v]:ptr[v + 1]]`` are the vertices of row ``v``.
    shape : tuple of int
        The grid the ``prod(shape)`` vertices are numbered over, row-major.  Axes of length 1
        are ignored.

    Returns
    -------
    numpy.ndarray or None
        ``int64`` colours of shape ``(prod(shape),)``; not checked here on the whole pattern
        (another row may hold other offsets): the caller checks it
        (:func:`gradarg.sparse.star.star_conflict`).
    """
    shape = tuple(int(d) for d in shape)
    n = len(ptr) - 1
    if n <= 1 or int(np.prod(shape)) != n or int(ptr[-1]) == 0:
        return None
    axes = [d for d, size in enumerate(shape) if size > 1]
    offsets = stencil_offsets(ptr, cols, shape)
    if any(o[d] for o in offsets for d in range(len(shape)) if shape[d] == 1):
        return None
    offsets = frozenset(tuple(o[d] for d in axes) for o in offsets)
    for tile in CATALOGUE:
        dims = len(tile.period)
        if dims != len(axes) or len(tile.offsets) != len(offsets):
            continue
        for perm, signs in _symmetries(dims):
            image = frozenset(tuple(signs[i] * o[perm[i]] for i in range(dims))
                              for o in offsets)
            if image != tile.offsets:
                continue
            index = np.unravel_index(np.arange(n, dtype=np.int64), shape)
            cell = tuple((signs[i] * index[axes[perm[i]]]) % tile.period[i]
                         for i in range(dims))
            return np.asarray(tile.table, dtype=np.int64).reshape(tile.period)[cell]
    return None


def _checks(offsets: np.ndarray, period: tuple[int, ...]):
    """Per cell ``t`` of the tile (row-major): the cells coloured before it that must differ
    from it, and the paths (cells ``q0, q1, q2, q3``) whose last-coloured cell is ``t``;
    ``None`` when an offset vanishes modulo the period (a cell adjacent to itself)."""
    size = int(np.prod(period))
    cells = np.array(np.unravel_index(np.arange(size), period), dtype=np.int64).T
    modulus = np.array(period, dtype=np.int64)

    def cell(points: np.ndarray) -> np.ndarray:
        return np.ravel_multi_index(tuple((points % modulus).T), period)

    step = np.stack([cell(cells + o) for o in offsets], axis=1)  # (size, steps)
    if (step == np.arange(size)[:, None]).any():
        return None
    differ: list[list[int]] = [[] for _ in range(size)]
    for t in range(size):
        for u in set(step[t].tolist()):
            differ[max(t, u)].append(min(t, u))
    m = len(offsets)
    triples = np.array(list(itertools.product(range(m), repeat=3)), dtype=np.int64)
    p1 = offsets[triples[:, 0]]
    p2 = p1 + offsets[triples[:, 1]]
    p3 = p2 + offsets[triples[:, 2]]
    distinct = p2.any(1) & (p3 - p1).any(1) & p3.any(1)  # four distinct lattice points
    rel = np.stack([p1, p2, p3], axis=1)[distinct]
    q = np.empty((size, len(rel), 4), dtype=np.int64)
    q[:, :, 0] = np.arange(size)[:, None]
    for i in range(3):
        q[:, :, i + 1] = cell((cells[:, None, :] + rel[None, :, i, :]).reshape(-1, len(period))
                              ).reshape(size, len(rel))
    paths: list[set[tuple[int, ...]]] = [set() for _ in range(size)]
    for row in q.reshape(-1, 4).tolist():
        paths[max(row)].add(tuple(row) if row[0] <= row[3] else tuple(row[::-1]))
    return differ, [sorted(p) for p in paths]


def tile_search(offsets, period: tuple[int, ...], k: int, budget: int = 10**6
                ) -> np.ndarray | None:
    """A table of at most ``k`` colours over a tile of shape ``period`` whose periodic
    repetition is a star colouring of the lattice with steps ``offsets``, or ``None`` (none
    exists, or none was found within ``budget`` colour assignments).

    Backtracking over the cells in row-major order, each given a colour below ``k`` and at
    most one past the largest used so far (each colouring up to a renaming of colours is
    tried once), every edge and path checked as soon as its last cell is coloured.

    Parameters
    ----------
    offsets : iterable of tuple of int
        The stencil's nonzero steps (their negatives are added), each of ``len(period)``
        integers.
    period : tuple of int
        The tile's shape.
    k : int
        Most colours.
    budget : int
        Most colour assignments tried.

    Returns
    -------
    numpy.ndarray or None
        ``int64`` table of shape ``period``.
    """
    steps = _steps(*(tuple(int(a) for a in o) for o in offsets if any(o)))
    made = _checks(np.array(sorted(steps), dtype=np.int64).reshape(-1, len(period)), period)
    if made is None:
        return None
    differ, paths = made
    size = len(differ)
    color = [-1] * size

    def fine(t: int) -> bool:
        c = color[t]
        if any(color[u] == c for u in differ[t]):
            return False
        return not any(color[a] == color[c2] and color[b] == color[d]
                       for a, b, c2, d in paths[t])

    if not backtrack(size, k, color, fine, [budget]):
        return None
    return np.array(color, dtype=np.int64).reshape(period)
