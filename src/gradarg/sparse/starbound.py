"""A lower bound on the star chromatic number, proved on a small piece of the graph.

A star colouring of a graph restricted to any induced subgraph is a star colouring of that
subgraph, so when some small induced subgraph admits no star colouring with ``k - 1`` colours,
no star colouring of the whole graph (greedy or not, in any vertex order) uses fewer than
``k``.  :func:`needs_at_least` takes breadth-first balls around a vertex of largest degree
(the middle one in index order), of the sizes :data:`BALLS` in turn until one proves the
bound, and decides each exactly: first a few first-fit colourings (:data:`FIRST_FITS` vertex
orders; one with ``k - 1`` colours or fewer settles it), then backtracking, vertices in ball
order, each given a colour no larger than one past the largest used so far (colour
permutations explored once), every path on four coloured vertices through the vertex just
coloured checked for two colours (the definition: Gebremedhin, Manne and Pothen, "What color
is your Jacobian?", SIAM Review 47 (2005), section 4.1).  Each ball's search gives up after
its budget of assignments (then it proves nothing): the answer is ``True`` only when proved.

Used by :mod:`gradarg.sparse.starfast` to accept a structured colouring without running the
greedy search: the chained Rosenbrock plus Powell Hessian (a chain of 4-cycles) needs 4
colours, which a ball of 10 vertices proves in about 0.1 ms; the 7-point stencil of a
triangulated grid needs 6, which a ball of 16 proves in about 1 ms.  (The 5-point stencil
needs 5, which takes a ball of 28 and about 3000 assignments: not tried, as a ball of 28 with
that budget would cost the 9-point stencil, which it cannot prove, as much again.)
"""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np

__all__ = ["BALLS", "FIRST_FITS", "backtrack", "needs_at_least"]

FIRST_FITS = 8
"""Vertex orders whose first-fit colouring is tried before the exhaustive search of a ball."""

BALLS = ((12, 20000), (16, 2000))
"""The balls searched exactly, in turn until one proves the bound: ``(most vertices, most
colour assignments)``.  The wider ball gets a small budget: it proves what the narrow one
cannot on denser stencils (the triangulated grid's 6 colours: about 1100 assignments), and
where it proves nothing (the 9-point stencil, whose 16-vertex ball has a star colouring with
8 colours that the search takes about 10000 assignments to find) it costs little."""


def needs_at_least(indptr: np.ndarray, indices: np.ndarray, k: int) -> bool:
    """Whether every star colouring of the graph ``(indptr, indices)`` (compressed adjacency,
    both directions, no self-loops) is proved to use at least ``k`` colours.

    ``True`` for ``k <= 1`` on a graph with a vertex, for ``k == 2`` on a graph with an edge;
    otherwise ``True`` only when a ball around a vertex of largest degree (the middle one
    of them in index order; sizes :data:`BALLS`, within the budget) is shown, by exhaustive
    search, to have no star colouring with ``k - 1`` colours.  ``False`` proves nothing.
    """
    n = len(indptr) - 1
    if n == 0:
        return k <= 0
    if k <= 1:
        return True
    if indptr[-1] == 0:
        return False
    if k == 2:
        return True
    degree = np.diff(indptr)
    top = np.flatnonzero(degree == degree.max())
    seed = int(top[top.size // 2])
    size = 0
    for most, budget in BALLS:
        if k > most:  # a ball of at most `most` vertices takes that many colours: no proof
            continue
        adj = _ball(indptr, indices, seed, most)
        if len(adj) <= size:
            break  # the component is smaller than the last ball: the same graph again
        size = len(adj)
        if _exhausted(adj, k - 1, budget):
            return True
    return False


def _ball(indptr: np.ndarray, indices: np.ndarray, seed: int, most: int) -> list[list[int]]:
    """The subgraph induced by the first ``most`` vertices of a breadth-first search from
    ``seed`` (neighbours in index order), as lists of neighbours numbered in visiting order."""
    order = [seed]
    where = {seed: 0}
    head = 0
    while head < len(order) and len(order) < most:
        v = order[head]
        head += 1
        for w in indices[indptr[v]:indptr[v + 1]].tolist():
            if w not in where:
                where[w] = len(order)
                order.append(w)
                if len(order) == most:
                    break
    return [[where[w] for w in indices[indptr[v]:indptr[v + 1]].tolist() if w in where]
            for v in order]


def _orders(n: int) -> list[list[int]]:
    """Vertex orders for :func:`_exhausted`'s first fit: ball order, its reverse, and
    :data:`FIRST_FITS` - 2 shuffles from a fixed seed (the same in every process)."""
    forward = list(range(n))
    out = [forward, forward[::-1]]
    rng = random.Random(n)
    for _ in range(FIRST_FITS - 2):
        order = forward[:]
        rng.shuffle(order)
        out.append(order)
    return out


def _exhausted(adj: list[list[int]], colours: int, most: int) -> bool:
    """Whether the graph ``adj`` is proved to have no star colouring with ``colours`` colours
    (``False`` also when the search ran out of its ``most`` assignments)."""
    n = len(adj)
    color = [-1] * n
    budget = [most]

    def fine(v: int) -> bool:
        """No coloured neighbour of ``v`` shares its colour, and no path on four coloured
        vertices through ``v`` has two colours."""
        c = color[v]
        for w in adj[v]:
            if color[w] == c:
                return False
        for w in adj[v]:
            a = color[w]
            if a < 0:
                continue
            for x in adj[w]:  # v–w–x–y with c(x) = c(v), c(y) = c(w)
                if x != v and color[x] == c:
                    for y in adj[x]:
                        if y != w and y != v and color[y] == a:
                            return False
            for u in adj[v]:  # u–v–w–x with c(u) = c(w), c(x) = c(v)
                if u != w and color[u] == a:
                    for x in adj[w]:
                        if x != v and x != u and color[x] == c:
                            return False
        return True

    # first fit in a few vertex orders (any number of colours): when one needs no more than
    # `colours`, a colouring exists and the search is not run
    for order in _orders(n):
        color[:] = [-1] * n
        for t in order:
            color[t] = 0
            while not fine(t):
                color[t] += 1
        if max(color, default=-1) < colours:
            return False
    color[:] = [-1] * n

    return backtrack(n, colours, color, fine, budget) is False


def backtrack(n: int, colours: int, color: list[int], fine: Callable[[int], bool],
              budget: list[int]) -> bool | None:
    """Colour the vertices ``0, …, n - 1`` in that order, each with a colour below ``colours``
    and at most one past the largest used so far (a colouring is tried once up to a renaming
    of its colours), keeping a colour only where ``fine(t)`` (which reads ``color``) accepts it.

    Returns ``True`` with the colouring left in ``color``, ``False`` when none exists, ``None``
    when the ``budget[0]`` assignments (spent in place) ran out first.
    """

    def search(t: int, used: int) -> bool | None:
        if t == n:
            return True
        for c in range(min(colours, used + 1)):
            budget[0] -= 1
            if budget[0] < 0:
                return None
            color[t] = c
            if fine(t):
                found = search(t + 1, max(used, c + 1))
                if found is not False:
                    return found
        color[t] = -1
        return False

    return search(0, 0)
