"""Acyclic colouring of a symmetric pattern, and recovery of a Hessian by substitution.

An *acyclic colouring* is a proper colouring in which every cycle uses at least three colours:
the subgraph spanned by any two colour classes is a forest.  It needs fewer colours than a star
colouring (a banded Hessian with half-bandwidth ``β``: ``β + 1`` against ``2β + 1``), at the
price of an indirect recovery: in each two-coloured tree, a leaf ``i`` (colour ``a``) with
its one remaining neighbour ``j`` (colour ``b``) gives ``H[i, j] = (H s_b)_i`` minus the entries
of row ``i`` toward colour ``b`` already found; the leaf is then removed and the tree peeled
further (Gebremedhin, Tarafdar, Manne and Pothen, SIAM J. Sci. Comput. 29 (2007); Coleman
and Cai, SIAM J. Algebraic Discrete Methods 7 (1986)).

The greedy colouring keeps, for every pair of colours, a union–find forest of the vertices
coloured so far: colour ``c`` is allowed for ``v`` when no neighbour has it and, for every
colour ``d``, ``v``'s neighbours of colour ``d`` lie in distinct trees of the ``(c, d)`` forest
(joining two of them through ``v`` would close a cycle).  The peeling order is computed once;
each call replays it as a few array operations per round.
"""

from __future__ import annotations

import numpy as np

__all__ = ["acyclic_coloring", "substitution_plan"]


def acyclic_coloring(indptr: np.ndarray, indices: np.ndarray, sequence: np.ndarray) -> np.ndarray:
    """Greedy acyclic colouring of ``(indptr, indices)`` in the vertex order ``sequence``."""
    n = len(indptr) - 1
    ptr, ind = indptr.tolist(), indices.tolist()
    color = [-1] * n
    forests: dict[tuple[int, int], dict[int, int]] = {}

    def find(parent: dict[int, int], v: int) -> int:
        root = v
        while parent.get(root, root) != root:
            root = parent[root]
        while parent.get(v, v) != root:  # path compression
            parent[v], v = root, parent[v]
        return root

    for v in sequence.tolist():
        by_colour: dict[int, list[int]] = {}
        for w in ind[ptr[v] : ptr[v + 1]]:
            if color[w] >= 0:
                by_colour.setdefault(color[w], []).append(w)
        c = 0
        while True:
            if c not in by_colour and all(
                len(ws) < 2
                or len({find(forests.get((min(c, d), max(c, d)), {}), w) for w in ws}) == len(ws)
                for d, ws in by_colour.items()
            ):
                break
            c += 1
        color[v] = c
        for d, ws in by_colour.items():
            parent = forests.setdefault((min(c, d), max(c, d)), {})
            for w in ws:
                parent[find(parent, w)] = find(parent, v)
    return np.asarray(color, dtype=np.int64)


def substitution_plan(
    rows: np.ndarray, cols: np.ndarray, colors: np.ndarray
) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]]:
    """The peeling schedule for the entries ``(rows[k], cols[k])`` of a symmetric pattern.

    Returns ``diagonal`` (entry indices ``k`` with ``rows[k] == cols[k]``) and a list of rounds
    ``(entries, slot, mirror, other_slot)``: in a round, for each undirected edge (entry
    ``entries[t]``, its mirror entry ``mirror[t]``), the value is ``B[slot] - S[slot]`` with
    ``B`` the flat ``passes × n`` products and ``S`` the running sums of found entries per
    ``(colour, vertex)`` slot; then ``S[slot] += value`` and ``S[other_slot] += value``.

    Raises ``ValueError`` if ``colors`` is not an acyclic colouring (a two-coloured cycle
    cannot be peeled).
    """
    n = colors.size
    diagonal = np.flatnonzero(rows == cols)
    upper = np.flatnonzero(rows < cols)
    key = rows * n + cols
    by_key = np.argsort(key)
    mirror = by_key[np.searchsorted(key[by_key], cols[upper] * n + rows[upper])]
    i, j = rows[upper], cols[upper]
    # remaining unresolved neighbours of vertex v with colour b: count[b * n + v]
    count = np.bincount(np.concatenate([colors[j] * n + i, colors[i] * n + j]),
                        minlength=colors.max() * n + n + n)
    todo = np.ones(upper.size, dtype=bool)
    rounds = []
    while todo.any():
        idx = np.flatnonzero(todo)
        slot_i = colors[j[idx]] * n + i[idx]  # i's sum toward j's colour
        slot_j = colors[i[idx]] * n + j[idx]
        leaf_i = count[slot_i] == 1
        leaf_j = count[slot_j] == 1
        ready = leaf_i | leaf_j
        if not ready.any():
            raise ValueError("the colouring is not acyclic: a two-coloured cycle remains")
        take = idx[ready]
        use_i = leaf_i[ready]
        slot = np.where(use_i, slot_i[ready], slot_j[ready])
        other = np.where(use_i, slot_j[ready], slot_i[ready])
        rounds.append((upper[take], slot, mirror[take], other))
        np.subtract.at(count, slot_i[ready], 1)
        np.subtract.at(count, slot_j[ready], 1)
        todo[take] = False
    return diagonal, rounds
