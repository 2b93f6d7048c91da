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
"""

from __future__ import annotations

import numpy as np

__all__ = ["star_coloring", "star_recovery"]


def star_coloring(indptr: np.ndarray, indices: np.ndarray, sequence: np.ndarray) -> np.ndarray:
    """Greedy star colouring of the graph ``(indptr, indices)`` in the vertex order ``sequence``."""
    n = len(indptr) - 1
    ptr, ind = indptr.tolist(), indices.tolist()
    color = [-1] * n
    counts: list[dict[int, int]] = [{} for _ in range(n)]  # vertex -> colour -> neighbours
    forbid = [-1] * (n + 1)
    for v in sequence.tolist():
        mine = counts[v]
        for w in ind[ptr[v] : ptr[v + 1]]:
            a = color[w]
            if a < 0:
                continue
            forbid[a] = v
            hub = mine[a] >= 2  # u–v–w–x with c(u) = c(w): no neighbour x of w may share c(v)
            for x in ind[ptr[w] : ptr[w + 1]]:
                cx = color[x]
                if cx < 0 or x == v:
                    continue
                if hub or counts[x].get(a, 0) >= 2:  # v–w–x–y with c(y) = c(w)
                    forbid[cx] = v
        c = 0
        while forbid[c] == v:
            c += 1
        color[v] = c
        for z in ind[ptr[v] : ptr[v + 1]]:
            cz = counts[z]
            cz[c] = cz.get(c, 0) + 1
    return np.asarray(color, dtype=np.int64)


def star_recovery(rows: np.ndarray, cols: np.ndarray, colors: np.ndarray) -> np.ndarray:
    """Flat positions in ``Bᵀ`` (``passes × n``, row ``c`` the product with colour ``c``'s seed)
    of every entry ``(rows[k], cols[k])`` of a symmetric pattern (diagonal included).

    Raises ``ValueError`` if ``colors`` is not a star colouring of the pattern (some entry
    cannot be read directly).
    """
    n = colors.size
    passes = int(colors.max()) + 1
    per = np.bincount(rows * passes + colors[cols], minlength=n * passes)  # row i, colour c
    direct = per[rows * passes + colors[cols]] == 1
    mirror = per[cols * passes + colors[rows]] == 1
    if not bool(np.all(direct | mirror)):
        k = int(np.flatnonzero(~(direct | mirror))[0])
        raise ValueError(
            f"the colouring is not a star colouring: entry ({rows[k]}, {cols[k]}) shares its "
            f"colour group in both its row and its column"
        )
    return np.where(direct, colors[cols] * n + rows, colors[rows] * n + cols)
