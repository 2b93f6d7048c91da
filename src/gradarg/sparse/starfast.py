"""The star colouring ``SparseHessian`` keeps: a structured colouring proved no worse than the
greedy search, else the search.

The search (:func:`search`, what ``SparseHessian`` did alone before) colours the adjacency
graph greedily in three vertex orders (:data:`ORDERS_TRIED`) and keeps the fewest colours.
Without numba it is interpreted, 20–50 ms on the benchmarks' Hessians (a 64 × 64 grid energy,
a chained Rosenbrock plus Powell function of 5000 unknowns), where numba's kernels take a few
milliseconds but cost about 0.6 s to load.  So :func:`colour` first tries colourings found by
a few array operations, cheapest first:

* **distance-2 colourings that meet their lower bound** (:mod:`gradarg.sparse.lowerbound`: ``v
  mod k`` and, over the input's grid shape, ``a · index(v) mod k``, where ``k`` is the most
  entries of one row of ``P ∪ Pᵀ ∪ I``).  A distance-2 colouring is a star colouring (no path
  on four vertices can have two colours when vertices two apart differ); on a grid stencil it
  may use fewer colours than the greedy star colouring (the minimal-surface energy's 7-point
  stencil: 7 against 9);
* **a periodic tile of a known grid stencil** (:func:`gradarg.sparse.tiling.colour`: the
  stencil looked up in a small catalogue of star colourings of lattices, up to the grid's
  symmetries), which may take fewer colours than any distance-2 colouring (the
  minimal-surface energy's 7-point stencil: 6, proved optimal by a ball of 16 vertices);
* **the periodic continuation of a prefix** (:func:`periodic`), tried when neither
  distance-2 colouring exists: the greedy star colouring of the first :data:`WINDOW`
  vertices in natural order, when its second half repeats with some period, continued with
  that period over the rest (chains of small blocks: Rosenbrock plus Powell, 4 colours).

Each candidate is checked on the whole pattern (:func:`gradarg.sparse.star.star_conflict`:
exactly the star colourings pass; a failed one is dropped), and the one with fewest colours,
``k``, is kept only when it is proved to need no more colours than the search:

* by a **lower bound** (:func:`gradarg.sparse.starbound.needs_at_least`: a small piece of the
  graph has no star colouring with ``k - 1`` colours, so no colouring has fewer than ``k``); or
* by the **search itself, stopped early**: each order's greedy colouring stops as soon as it
  needs colour ``k - 1`` (:func:`gradarg.sparse.star.star_coloring`'s ``limit``; the greedy
  colouring of a prefix of the order depends on that prefix only, so the order would need at
  least ``k`` colours).  An order that finishes with fewer colours is kept instead (and
  lowers the limit for the next), so the result is the search's own colouring whenever the
  search would use fewer colours than the candidate.

The colour count is thus never more than the search's, whatever the pattern; equal counts
keep the candidate.  Gebremedhin, Manne and Pothen, "What color is your Jacobian?", SIAM
Review 47 (2005), section 4 (star colourings, direct recovery); Gebremedhin, Tarafdar, Manne
and Pothen, SIAM J. Sci. Comput. 29 (2007).
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import NamedTuple

import numpy as np

from . import tiling
from ._numba import interpreted
from .greedy import order
from .lowerbound import lattice, modular
from .star import StarColourer, star_coloring, star_conflict
from .starbound import needs_at_least

__all__ = ["DENSE", "ORDERS_TRIED", "SAMPLE", "WINDOW", "StarColouring", "colour", "periodic", "search"]

ORDERS_TRIED = ("natural", "largest_first", "smallest_last")
"""The vertex orders of the greedy search, in the order tried (the first with fewest colours
is kept)."""

WINDOW = 256
"""Vertices of the prefix :func:`periodic` colours (graphs with more vertices only)."""

DENSE = 16
"""Most neighbours per vertex, on average over the window, for :func:`periodic` to colour it."""

SAMPLE = 256
"""Rows the lattice colouring is first looked for on (:func:`sampled_lattice`)."""


class StarColouring(NamedTuple):
    """A star colouring and how it was found: ``route`` is ``"search"`` (the greedy search's
    colouring) or ``"<candidate>+<proof>"``, the candidate ``"modular"``, ``"lattice"``,
    ``"tile"`` or ``"periodic"``, the proof ``"bound"`` (a lower bound) or ``"orders"`` (the search stopped
    early in every order)."""

    colors: np.ndarray
    route: str


def search(indptr: np.ndarray, indices: np.ndarray, best: np.ndarray | None = None,
           skip: tuple[str, ...] = ()) -> np.ndarray:
    """The greedy star colouring of ``(indptr, indices)`` with fewest colours among the orders
    of :data:`ORDERS_TRIED` (the first on a tie), or ``best`` when no order (but those in
    ``skip``) uses fewer colours than it (each order stopped once it needs as many)."""
    run = StarColourer(indptr, indices)  # the graph prepared once for every order
    # interpreted: one pause of the garbage collector for all orders (each pause's end sets
    # off a collection that walks the lists just made: about 1 ms each on a 64 × 64 grid)
    with nullcontext() if run.compiled else interpreted():
        for name in ORDERS_TRIED:
            if name in skip:
                continue
            limit = None if best is None else int(best.max()) + 1
            sequence: np.ndarray | list[int]
            if name == "natural":
                n = len(indptr) - 1
                sequence = np.arange(n) if run.compiled else list(range(n))
            elif name == "smallest_last":
                sequence = run.smallest_last()
            else:
                sequence = order(indptr, indices, name)
            colors = run(sequence, limit)
            if colors is not None and (best is None or colors.max() < best.max()):
                best = colors
        del run  # its lists freed now, not walked by the collection the pause's end sets off
    assert best is not None
    return best


def periodic(indptr: np.ndarray, indices: np.ndarray, window: int = WINDOW
             ) -> np.ndarray | None:
    """The greedy star colouring of the first ``window`` vertices in natural order (the graph
    they induce), continued periodically, or ``None``.

    The period is the smallest ``L <= window // 4`` with ``c[v] = c[v - L]`` over the second
    half of the window; vertex ``v >= window`` takes ``c[h + (v - h) mod L]``, ``h = window //
    2``.  ``None`` when the graph has no more than ``window`` vertices or the colours repeat
    with no such period.  Not checked here: a continuation may not be a star colouring
    (:func:`colour` checks it).  Its colours are those of the natural order's greedy
    colouring on the window, so the natural order's whole colouring uses at least as many.
    """
    n = len(indptr) - 1
    if n <= window or indptr[window] > DENSE * window:
        return None
    end = int(indptr[window])
    owner = np.repeat(np.arange(window, dtype=np.int64), np.diff(indptr[:window + 1]))
    inside = indices[:end] < window
    ptr = np.zeros(window + 1, dtype=np.int64)
    np.cumsum(np.bincount(owner[inside], minlength=window), out=ptr[1:])
    colors = star_coloring(ptr, indices[:end][inside], np.arange(window))
    assert colors is not None
    half = window // 2
    for period in range(1, window // 4 + 1):
        if np.array_equal(colors[half:], colors[half - period:window - period]):
            break
    else:
        return None
    out = np.empty(n, dtype=np.int64)
    out[:window] = colors
    out[window:] = colors[half + (np.arange(window, n, dtype=np.int64) - half) % period]
    return out


def _compact(colors: np.ndarray) -> np.ndarray:
    """The colours renumbered ``0, 1, …`` in increasing order (no empty colour class)."""
    used = np.zeros(int(colors.max()) + 1, dtype=bool)
    used[colors] = True
    if used.all():
        return colors
    return (np.cumsum(used) - 1)[colors]


def sampled_lattice(ptr: np.ndarray, cols: np.ndarray, shape: tuple[int, ...]
                    ) -> np.ndarray | None:
    """:func:`gradarg.sparse.lowerbound.lattice` on at most :data:`SAMPLE` + 1 rows of the
    pattern ``(ptr, cols)`` (evenly spaced, and the longest), or ``None``.

    A stencil's rows all hold the same offsets (fewer at a boundary), so a sample finds the
    colouring all rows find, in a fraction of the time (about 0.2 against 0.9 ms on the
    64 × 64 grid's 7-point stencil).  Not checked beyond the sample: a pattern whose other
    rows differ may get a colouring that is no star colouring (:func:`colour` checks it on
    the whole pattern, then looks on all rows).
    """
    n = len(ptr) - 1
    if len(shape) < 2:
        return None  # lattice's own answer (one dimension is modular's case)
    lengths = np.diff(ptr)
    chosen = np.zeros(n, dtype=bool)  # (not np.unique: its first call imports 10-40 ms)
    chosen[np.linspace(0, n - 1, min(n, SAMPLE)).astype(np.int64)] = True
    chosen[int(np.argmax(lengths))] = True
    picked = np.flatnonzero(chosen)
    sub = np.zeros(picked.size + 1, dtype=np.int64)
    np.cumsum(lengths[picked], out=sub[1:])
    take = np.repeat(ptr[picked] - sub[:-1], lengths[picked]) + np.arange(sub[-1])
    return lattice(sub, cols[take], shape)


def colour(rows: np.ndarray, cols: np.ndarray, indptr: np.ndarray, indices: np.ndarray,
           shape: tuple[int, ...] | None = None) -> StarColouring:
    """A star colouring of the symmetric pattern with entries ``(rows, cols)`` (row-major,
    diagonal included) and adjacency ``(indptr, indices)`` that uses no more colours than
    :func:`search`'s (see the module docstring); ``shape``: the input's, for the lattice
    colouring.  Returns the ``int64`` colours and the route that found them.
    """
    n = len(indptr) - 1
    if n == 0:
        return StarColouring(np.zeros(0, dtype=np.int64), "search")
    ptr = indptr + np.arange(n + 1, dtype=np.int64)  # rows of P ∪ Pᵀ ∪ I (one diagonal each)
    found: list[tuple[int, str, np.ndarray]] = []
    for name, find in (
            ("modular", lambda: modular(ptr, cols, n)),
            ("lattice", lambda: None if shape is None else sampled_lattice(ptr, cols, shape)),
            ("tile", lambda: None if shape is None else tiling.colour(ptr, cols, shape)),
            ("periodic", lambda: None if found else periodic(indptr, indices))):
        colors = find()  # the periodic continuation only without a distance-2 colouring
        if colors is not None:
            colors = _compact(colors)
            found.append((int(colors.max()) + 1, name, colors))
    for k, name, colors in sorted(found, key=lambda t: t[0]):
        if star_conflict(rows, cols, colors) is not None:
            # not a star colouring of the whole pattern (a continuation, or a lattice colouring
            # from a sample of rows, can fail): the lattice colouring from every row instead
            colors = lattice(ptr, cols, shape) if name == "lattice" and shape else None
            if colors is None:
                continue
            colors = _compact(colors)
            k = int(colors.max()) + 1
        if needs_at_least(indptr, indices, k):
            return StarColouring(colors, f"{name}+bound")
        # the natural order's colouring starts with the window's: as many colours at least
        kept = search(indptr, indices, colors, skip=("natural",) if name == "periodic" else ())
        return StarColouring(kept, f"{name}+orders" if kept is colors else "search")
    return StarColouring(search(indptr, indices), "search")
