"""A lower bound on the star chromatic number, proved on a small piece of the graph.

A star colouring of a graph restricted to any induced subgraph is a star colouring of that
subgraph, so when some small induced subgraph admits no star colouring with ``k - 1`` colours,
no star colouring of the whole graph (greedy or not, in any vertex order) uses fewer than
``k``.  :func:`needs_at_least` takes the breadth-first ball of at most :data:`BALL` vertices
around a vertex of largest degree (the middle one in index order), and decides it exactly
by backtracking: vertices in ball order, each given a colour no larger than one past the
largest used so far (colour permutations explored once), every path on four coloured vertices
through the vertex just coloured checked for two colours (the definition: Gebremedhin, Manne
and Pothen, "What color is your Jacobian?", SIAM Review 47 (2005), section 4.1).  The search
gives up after :data:`BUDGET` assignments (then the ball proves nothing): the answer is
``True`` only when proved.

Used by :mod:`gradarg.sparse.starfast` to accept a structured colouring without running the
greedy search: the chained Rosenbrock plus Powell Hessian (a chain of 4-cycles) needs 4
colours, which a ball of 10 vertices proves in about 0.1 ms.
"""

from __future__ import annotations

import numpy as np

__all__ = ["BALL", "BUDGET", "needs_at_least"]

BALL = 16
"""Most vertices of one ball searched exactly."""

BUDGET = 20000
"""Most colour assignments tried before the search gives up."""

def needs_at_least(indptr: np.ndarray, indices: np.ndarray, k: int) -> bool:
    """Whether every star colouring of the graph ``(indptr, indices)`` (compressed adjacency,
    both directions, no self-loops) is proved to use at least ``k`` colours.

    ``True`` for ``k <= 1`` on a graph with a vertex, for ``k == 2`` on a graph with an edge;
    otherwise ``True`` only when the ball around a vertex of largest degree (the middle one
    of them in index order) is shown, by exhaustive search, to have no star colouring with
    ``k - 1`` colours.  ``False`` proves nothing.
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
    if k > BALL:  # a ball of at most BALL vertices takes BALL colours: nothing to prove
        return False
    degree = np.diff(indptr)
    top = np.flatnonzero(degree == degree.max())
    return _exhausted(_ball(indptr, indices, int(top[top.size // 2])), k - 1)


def _ball(indptr: np.ndarray, indices: np.ndarray, seed: int) -> list[list[int]]:
    """The subgraph induced by the first :data:`BALL` vertices of a breadth-first search from
    ``seed`` (neighbours in index order), as lists of neighbours numbered in visiting order."""
    order = [seed]
    where = {seed: 0}
    head = 0
    while head < len(order) and len(order) < BALL:
        v = order[head]
        head += 1
        for w in indices[indptr[v]:indptr[v + 1]].tolist():
            if w not in where:
                where[w] = len(order)
                order.append(w)
                if len(order) == BALL:
                    break
    return [[where[w] for w in indices[indptr[v]:indptr[v + 1]].tolist() if w in where]
            for v in order]


def _exhausted(adj: list[list[int]], colours: int) -> bool:
    """Whether the graph ``adj`` is proved to have no star colouring with ``colours`` colours
    (``False`` also when the search ran out of budget)."""
    n = len(adj)
    color = [-1] * n
    budget = [BUDGET]

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

    def search(t: int, used: int) -> bool | None:
        """``True``: a colouring exists; ``False``: none; ``None``: out of budget."""
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
                    color[t] = -1
                    return found
        color[t] = -1
        return False

    return search(0, 0) is False
