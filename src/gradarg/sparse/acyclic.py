"""Acyclic colouring of a symmetric pattern, and recovery of a Hessian by substitution.

An *acyclic colouring* is a proper colouring in which every cycle uses at least three colours:
the subgraph spanned by any two colour classes is a forest.  It needs fewer colours than a star
colouring (a banded Hessian with half-bandwidth ``β``: ``β + 1`` against ``2β + 1``), at the
price of an indirect recovery: the entries are found by substitution along the two-coloured
trees (Gebremedhin, Tarafdar, Manne and Pothen, SIAM J. Sci. Comput. 29 (2007); Coleman and
Cai, SIAM J. Algebraic Discrete Methods 7 (1986)).

The greedy colouring keeps, for every pair of colours, a union–find forest of the vertices
coloured so far: colour ``c`` is allowed for ``v`` when no neighbour has it and, for every
colour ``d``, ``v``'s neighbours of colour ``d`` lie in distinct trees of the ``(c, d)`` forest
(joining two of them through ``v`` would close a cycle); compiled by numba on first use.

The substitution, all trees at once.  With ``B`` the products flattened ``passes × n``
(``B[b·n + v] = (H s_b)_v``), the *slot* ``(b, v)`` of a vertex ``v`` and a colour
``b ≠ c(v)`` holds ``B[b·n + v] = Σ H[v, w]`` over the neighbours ``w`` of ``v`` of colour
``b``.  Each off-diagonal edge ``{i, j}`` joins the slots ``(c(j), i)`` and ``(c(i), j)``:
each slot is the sum of its edges, and slots and edges form a forest, one tree per two-coloured
tree of the graph (a cycle in it is a two-coloured cycle).  Root each tree at any node (here:
its centroid, see below); the edge from a slot ``u`` to its parent is ``B[u]`` minus the edges
to ``u``'s children, so, unrolled, ``H[edge of u] = σ(u) Σ_{k in subtree(u)} σ(k) B[k]`` with
``σ(k) = (-1)^depth(k)``.  Numbered in depth-first preorder, every subtree is a contiguous
range of slots, and every entry is the difference of two values of one prefix sum ``P`` of
``σ(k) B[k]``: each call is a gather, a cumulative sum and two gathers, whatever the depth of
the trees (the former plan peeled the trees leaf by leaf, one round of array operations per
layer: thousands on a long band).  The plan (preorder, signs, ranges) is built once by
iterative depth-first searches, compiled by numba, in ``O(nnz + passes · n)``.

Accuracy.  ``P`` is accumulated in float64, whatever the products' dtype, and stays small, so
that the difference of two of its values loses little: a whole tree sums to zero, and within a
tree ``P`` holds, signed, the edges to the children not visited yet of the nodes on the current
path; each node's largest child is visited last, so at most ``log₂`` of the tree's size of
those nodes have any.  The diagonal entries ``H[v, v] = B[c(v)·n + v]`` enter ``P`` as
``+B, −B`` pairs, so that ``P`` comes back to where it was after each.  An entry is the signed
sum of the products over its subtree, whose rounding errors add up: each tree is rooted at its
centroid, so that no subtree holds more than half of it (a path is summed from its middle, as
peeling it from both ends did).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._numba import lazy_njit

__all__ = ["SubstitutionPlan", "acyclic_coloring", "substitution_plan"]


def acyclic_coloring(indptr: np.ndarray, indices: np.ndarray, sequence: np.ndarray) -> np.ndarray:
    """Greedy acyclic colouring of ``(indptr, indices)`` in the vertex order ``sequence``.

    Compiled by numba on first use: the forests of all colour pairs live in one
    open-addressing table keyed by ``(colour pair, vertex)`` (a vertex absent from it is its
    own root); the former pure-Python loop took 60–200 ms on a 64 × 64 grid or a band of
    4096.
    """
    i64 = np.int64
    return _acyclic(np.ascontiguousarray(indptr, dtype=i64),
                    np.ascontiguousarray(indices, dtype=i64),
                    np.ascontiguousarray(sequence, dtype=i64))


@lazy_njit(inline=True)
def _where(kp, kv, pair, v):  # pragma: no cover - compiled
    """Slot of ``(pair, v)`` in the table (or the empty slot where it would go)."""
    mask = kp.size - 1
    h = ((pair * 1000003) ^ (v * 40503)) & mask
    while kp[h] >= 0 and (kp[h] != pair or kv[h] != v):
        h = (h + 1) & mask
    return h


@lazy_njit
def _find(kp, kv, par, pair, v):  # pragma: no cover - compiled
    root = v
    while True:
        h = _where(kp, kv, pair, root)
        if kp[h] < 0 or par[h] == root:
            break
        root = par[h]
    while v != root:  # path compression
        h = _where(kp, kv, pair, v)
        nxt = par[h]
        par[h] = root
        v = nxt
    return root


@lazy_njit
def _link(kp, kv, par, size, pair, a, b):  # pragma: no cover - compiled
    """``parent[a] = b`` in the forest ``pair``; grows the table past half full."""
    if 2 * (size + 1) > kp.size:
        old_p, old_v, old_par = kp, kv, par
        kp = np.full(2 * old_p.size, -1, dtype=np.int64)
        kv = np.zeros(2 * old_p.size, dtype=np.int64)
        par = np.zeros(2 * old_p.size, dtype=np.int64)
        for h in range(old_p.size):
            if old_p[h] >= 0:
                g = _where(kp, kv, old_p[h], old_v[h])
                kp[g], kv[g], par[g] = old_p[h], old_v[h], old_par[h]
    h = _where(kp, kv, pair, a)
    if kp[h] < 0:
        kp[h], kv[h] = pair, a
        size += 1
    par[h] = b
    return kp, kv, par, size


@lazy_njit
def _acyclic(ptr, ind, sequence):  # pragma: no cover - compiled
    n = ptr.size - 1
    color = np.full(n, -1, dtype=np.int64)
    kp = np.full(1024, -1, dtype=np.int64)  # forests: (colour pair, vertex) -> parent
    kv = np.zeros(1024, dtype=np.int64)
    par = np.zeros(1024, dtype=np.int64)
    size = 0
    taken = np.full(n + 1, -1, dtype=np.int64)  # neighbour colours of the current vertex
    widest = 0
    for v in range(n):
        widest = max(widest, ptr[v + 1] - ptr[v])
    ws = np.empty(widest, dtype=np.int64)
    cs = np.empty(widest, dtype=np.int64)
    roots = np.empty(widest, dtype=np.int64)
    for t in range(sequence.size):
        v = sequence[t]
        k = 0
        for p in range(ptr[v], ptr[v + 1]):
            w = ind[p]
            if color[w] >= 0:  # insertion sort by colour: neighbours grouped by colour
                j = k
                while j > 0 and cs[j - 1] > color[w]:
                    ws[j], cs[j] = ws[j - 1], cs[j - 1]
                    j -= 1
                ws[j], cs[j] = w, color[w]
                taken[color[w]] = v
                k += 1
        c = 0
        while True:
            ok = taken[c] != v
            g = 0
            while ok and g < k:  # group of colour cs[g]: its roots must be distinct
                e = g
                while e < k and cs[e] == cs[g]:
                    e += 1
                if e - g >= 2:
                    d = cs[g]
                    pair = min(c, d) * n + max(c, d)
                    for j in range(g, e):
                        roots[j] = _find(kp, kv, par, pair, ws[j])
                        for i in range(g, j):
                            if roots[i] == roots[j]:
                                ok = False
                g = e
            if ok:
                break
            c += 1
        color[v] = c
        for j in range(k):
            d = cs[j]
            pair = min(c, d) * n + max(c, d)
            a = _find(kp, kv, par, pair, ws[j])
            b = _find(kp, kv, par, pair, v)
            kp, kv, par, size = _link(kp, kv, par, size, pair, a, b)
    return color


class SubstitutionPlan(NamedTuple):
    """Every entry of a symmetric pattern as a difference of one prefix sum of the products.

    With ``B`` the products flattened ``passes × n`` and ``P = [0, cumsum(sign · B[order])]``
    (accumulated in float64), entry ``k`` is ``P[plus[k]] − P[minus[k]]``.
    """

    order: np.ndarray
    """``int64``: the slots (indices into ``B``) in preorder, tree by tree, then each diagonal
    slot twice."""
    sign: np.ndarray
    """``float64``, ``±1`` per position of ``order``: ``(−1)^depth``; ``+1, −1`` for a diagonal
    slot's two positions."""
    plus: np.ndarray
    """``int64`` per entry: the end of its range in ``P`` (the start if its sign is ``−1``)."""
    minus: np.ndarray
    """``int64`` per entry: the start of its range in ``P`` (the end if its sign is ``−1``)."""

    def values(self, flat: np.ndarray) -> np.ndarray:
        """The entries from the flat products ``flat`` (NumPy; ``SparseHessian`` does the same
        with torch), in ``flat``'s dtype."""
        prefix = np.zeros(self.order.size + 1)
        np.cumsum(flat[self.order].astype(np.float64) * self.sign, out=prefix[1:])
        return (prefix[self.plus] - prefix[self.minus]).astype(flat.dtype)


def substitution_plan(rows: np.ndarray, cols: np.ndarray, colors: np.ndarray) -> SubstitutionPlan:
    """The substitution for the entries ``(rows[k], cols[k])`` of a symmetric pattern, coloured
    by ``colors``, as a :class:`SubstitutionPlan` (see the module's text).

    ``O(nnz + passes · n)`` (and a sort of the entries to pair each with its mirror):
    iterative depth-first searches of the forest of slots, compiled by numba; no recursion, so
    trees as deep as the input is long are fine.

    Raises ``ValueError`` if ``colors`` is not an acyclic colouring: two neighbours share a
    colour, or two colours span a cycle (the forest of slots has a cycle).
    """
    i64 = np.int64
    rows = np.ascontiguousarray(rows, dtype=i64)
    cols = np.ascontiguousarray(cols, dtype=i64)
    colors = np.ascontiguousarray(colors, dtype=i64)
    n = colors.size
    diagonal = np.flatnonzero(rows == cols)
    upper = np.flatnonzero(rows < cols)
    key = rows * n + cols
    by_key = np.argsort(key)
    mirror = by_key[np.searchsorted(key[by_key], cols[upper] * n + rows[upper])]
    i, j = rows[upper], cols[upper]
    if np.any(colors[i] == colors[j]):
        raise ValueError("the colouring is not acyclic: two neighbours share a colour")
    slots = (int(colors.max()) + 1) * n if n else 0
    order, sign, plus_e, minus_e, size, ok = _forest(colors[j] * n + i, colors[i] * n + j, slots)
    if not ok:
        raise ValueError("the colouring is not acyclic: a two-coloured cycle remains")
    d = diagonal.size
    first = size + 2 * np.arange(d, dtype=i64)  # a diagonal slot's +B, -B positions in order
    v = rows[diagonal]
    plus = np.empty(rows.size, dtype=i64)
    minus = np.empty(rows.size, dtype=i64)
    plus[upper], minus[upper] = plus_e, minus_e
    plus[mirror], minus[mirror] = plus_e, minus_e
    plus[diagonal], minus[diagonal] = first + 1, first
    return SubstitutionPlan(
        order=np.concatenate([order[:size], np.repeat(colors[v] * n + v, 2)]),
        sign=np.concatenate([sign[:size], np.tile([1.0, -1.0], d)]),
        plus=plus,
        minus=minus,
    )


@lazy_njit
def _tree(root, t, ptr, adj, a, b, cursor, up, pre, size, heavy, order, sign,
          stack):  # pragma: no cover - compiled
    """Depth-first search of ``root``'s tree from position ``t`` of ``order``: each node's
    preorder position ``pre``, edge to its parent ``up``, subtree size, ``(-1)^depth``; a
    node's edge ``heavy`` (if not ``-1``) is followed after its other edges.  Returns the
    position after the tree, or ``-1`` if a node is reached twice (a cycle)."""
    pre[root] = t
    up[root] = -1
    order[t] = root
    sign[t] = 1.0
    t += 1
    top = 0
    stack[0] = root
    while top >= 0:
        u = stack[top]
        c = cursor[u]
        if c <= ptr[u + 1]:
            cursor[u] = c + 1
            if c < ptr[u + 1]:
                e = adj[c]
                if e == up[u] or e == heavy[u]:
                    continue
            else:  # the other edges done: the heavy one
                e = heavy[u]
                if e < 0:
                    continue
            w = b[e] if a[e] == u else a[e]
            if pre[w] >= 0:
                return -1
            pre[w] = t
            up[w] = e
            order[t] = w
            sign[t] = -sign[pre[u]]
            t += 1
            top += 1
            stack[top] = w
        else:  # u's subtree is order[pre[u]:t]
            size[u] = t - pre[u]
            top -= 1
    return t


@lazy_njit
def _again(t, end, ptr, order, cursor, pre):  # pragma: no cover - compiled
    """Forget the search of the tree ``order[t:end]``, to search it again."""
    for q in range(t, end):
        u = order[q]
        pre[u] = -1
        cursor[u] = ptr[u]


@lazy_njit
def _forest(a, b, slots):  # pragma: no cover - compiled
    """Depth-first preorder of the forest on ``slots`` nodes whose edge ``e`` joins ``a[e]`` and
    ``b[e]``: ``(order, sign, plus, minus, count, ok)``, ``order[:count]`` the nodes, tree by
    tree, ``sign`` their ``(-1)^depth``, and edge ``e`` (to the parent of node ``u``) the
    range ``[pre(u), pre(u) + subtree size)`` of ``order``, as the positions ``plus[e]`` and
    ``minus[e]`` of the prefix sum (swapped when ``u``'s sign is ``−1``); ``ok`` is False if the
    graph has a cycle.

    Each tree is searched from any node, for the subtree sizes; again from its centroid (no
    subtree more than half the tree: an entry sums the products, and their rounding errors, of
    at most half its tree); and a last time with each node's largest child followed last, so
    that going down it leaves no sibling to come (a sibling's edge still to come stays in the
    prefix sum meanwhile): only ``O(log size)`` ancestors of a node have children still to come.
    """
    m = a.size
    ptr = np.zeros(slots + 1, dtype=np.int64)  # the forest's adjacency in CSR, edges by id
    for e in range(m):
        ptr[a[e] + 1] += 1
        ptr[b[e] + 1] += 1
    for s in range(slots):
        ptr[s + 1] += ptr[s]
    cursor = ptr[:-1].copy()
    adj = np.empty(2 * m, dtype=np.int64)
    for e in range(m):
        adj[cursor[a[e]]] = e
        cursor[a[e]] += 1
        adj[cursor[b[e]]] = e
        cursor[b[e]] += 1
    cursor[:] = ptr[:-1]  # now: the next edge of each node to explore
    pre = np.full(slots, -1, dtype=np.int64)
    up = np.full(slots, -1, dtype=np.int64)  # edge to the parent
    heavy = np.full(slots, -1, dtype=np.int64)  # edge to the largest child, followed last
    size = np.zeros(slots, dtype=np.int64)
    order = np.empty(2 * m, dtype=np.int64)
    sign = np.empty(2 * m, dtype=np.float64)
    stack = np.empty(2 * m, dtype=np.int64)
    plus = np.empty(m, dtype=np.int64)
    minus = np.empty(m, dtype=np.int64)
    t = 0
    for e0 in range(m):
        if pre[a[e0]] >= 0:
            continue
        end = _tree(a[e0], t, ptr, adj, a, b, cursor, up, pre, size, heavy, order, sign, stack)
        if end < 0:
            return order, sign, plus, minus, t, False
        centre = a[e0]  # walk toward the child holding more than half the tree
        moved = True
        while moved:
            moved = False
            for q in range(ptr[centre], ptr[centre + 1]):
                e = adj[q]
                w = b[e] if a[e] == centre else a[e]
                if e != up[centre] and 2 * size[w] > end - t:
                    centre = w
                    moved = True
                    break
        if centre != a[e0]:  # the subtree sizes, seen from the centre
            _again(t, end, ptr, order, cursor, pre)
            _tree(centre, t, ptr, adj, a, b, cursor, up, pre, size, heavy, order, sign, stack)
        for q in range(t + 1, end):  # each node's largest child
            u = order[q]
            e = up[u]
            p = b[e] if a[e] == u else a[e]
            h = heavy[p]
            if h < 0 or size[u] > size[b[h] if a[h] == p else a[h]]:
                heavy[p] = e
        _again(t, end, ptr, order, cursor, pre)
        _tree(centre, t, ptr, adj, a, b, cursor, up, pre, size, heavy, order, sign, stack)
        t = end
    for e in range(m):
        u = a[e] if up[a[e]] == e else b[e]  # the child end of e
        if sign[pre[u]] > 0:
            plus[e], minus[e] = pre[u] + size[u], pre[u]
        else:
            plus[e], minus[e] = pre[u], pre[u] + size[u]
    return order, sign, plus, minus, t, True
