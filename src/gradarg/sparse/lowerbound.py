"""Colourings with the fewest colours possible, tried before any search: a modular colouring
``v mod k`` and a lattice colouring ``(a · index(v)) mod k`` over the vertices' grid shape, where
``k`` is the most entries of one line (no distance-2 colouring can use fewer).  Either one, when
valid, is optimal, so :mod:`gradarg.sparse.d2color` returns it without a greedy search.

Imports NumPy and the interpreted colouring's walk limit.
"""

from __future__ import annotations

import numpy as np

from ._pycolor import MAX_WALK

__all__ = ["LATTICE_CANDIDATES", "lattice", "modular"]


def modular(pb: np.ndarray, ib: np.ndarray, nv: int) -> np.ndarray | None:
    """The colouring ``v mod k`` of the ``nv`` vertices, where ``k`` is the most vertices one
    line ``(pb, ib)`` holds, when it is proper (no line holds two vertices of one residue),
    else ``None``.

    ``k`` is a lower bound (a line's vertices need distinct colours), so a proper ``v mod k``
    is optimal: no greedy order can use fewer colours, and ``"best"`` returns it without a
    search.  It is proper for the patterns whose vertices are numbered along a regular
    stencil with spread below ``k`` in index space: a band of ``k`` consecutive columns per
    row (Curtis, Powell and Reid's colouring of banded matrices, IMA J. Appl. Math. 13,
    1974), blocks of ``k``, and stencils whose offsets are distinct modulo ``k`` (a 7-point
    stencil on 16³, ``k = 7``; a 9-point stencil on 48², ``k = 9``).  The check is one
    ``bincount`` (or a sort) over the entries: O(nnz).

    Parameters
    ----------
    pb, ib : numpy.ndarray
        ``int64`` compressed lines of the other side: ``ib[pb[w]:pb[w + 1]]`` are the
        vertices (``< nv``) of line ``w``.
    nv : int
        Number of vertices.

    Returns
    -------
    numpy.ndarray or None
        ``int64`` colours ``v % k`` of shape ``(nv,)``, or ``None`` when two vertices of one
        line share a residue.
    """
    lengths = np.diff(pb)
    k = int(lengths.max(initial=1))
    if k <= 1:  # no line joins two vertices: one colour
        return np.zeros(nv, dtype=np.int64)
    residue = ib % k
    lines = lengths.size
    if lines * k <= 4 * ib.size + 65536:  # one counter per (line, residue)
        key = np.repeat(np.arange(lines, dtype=np.int64) * k, lengths) + residue
        if np.bincount(key, minlength=lines * k).max(initial=0) > 1:
            return None
    else:
        key = np.repeat(np.arange(lines, dtype=np.int64), lengths) * k + residue
        key.sort()
        if key.size > 1 and bool((key[1:] == key[:-1]).any()):
            return None
    return np.arange(nv, dtype=np.int64) % k


LATTICE_CANDIDATES = 512
"""Most coefficient vectors :func:`lattice` tries (``k ** len(shape)``)."""


def lattice(pb: np.ndarray, ib: np.ndarray, shape: tuple[int, ...]) -> np.ndarray | None:
    """A lattice colouring ``(a · index(v)) mod k`` of the vertices, numbered row-major over
    ``shape`` (``index(v)``: the multi-index), that meets the lower bound ``k`` (the most
    vertices one line ``(pb, ib)`` holds), or ``None``.

    Stencils on grids are coloured optimally this way when their offsets stay distinct under
    some ``a`` modulo ``k``: a 5-point stencil on a 2-D grid with ``a = (1, 2)``, ``k = 5``;
    the Gray–Scott pattern (two species on a periodic 48 × 48 grid, each row a 5-point
    stencil and the other species at the point: ``k = 6``) with ``a = (3, 1, 2)``, where
    largest-first and DSATUR use 10 colours.  The colour difference of two vertices is
    ``a · δ mod k`` with ``δ`` their multi-index difference, so it is enough to collect the
    residues ``δ mod k`` (per dimension) of the pairs of vertices sharing a line (the walks of
    the distance-2 graph, vectorised), then to keep the first ``a`` in
    ``[0, k)^D`` (lexicographic) with ``a · δ ≢ 0`` for each: the colouring is proper by
    construction, and optimal.  The pairs are laid out by broadcasting the lines padded to
    ``k`` entries: ``None`` when that wastes much (lines of very unequal lengths) or exceeds
    :data:`gradarg.sparse._pycolor.MAX_WALK` pairs, when ``k ** D`` exceeds
    :data:`LATTICE_CANDIDATES`, when ``shape`` has fewer than 2 dimensions (one dimension is
    :func:`modular`'s case) or does not hold the vertices, and when no ``a`` works.

    Parameters
    ----------
    pb, ib : numpy.ndarray
        ``int64`` compressed lines of the other side (vertices ``< prod(shape)``).
    shape : tuple of int
        The vertices' shape (the input's for columns, the output's for rows).

    Returns
    -------
    numpy.ndarray or None
        ``int64`` colours of shape ``(prod(shape),)``, or ``None``.
    """
    shape = tuple(int(d) for d in shape)
    nv = int(np.prod(shape, dtype=np.int64))
    dims = len(shape)
    lengths = np.diff(pb)
    k = int(lengths.max(initial=1))
    if dims < 2 or k <= 1 or k**dims > LATTICE_CANDIDATES or (ib.size and ib.max() >= nv):
        return None
    lines = lengths.size
    if lines * k * k > 2 * int(lengths @ lengths) + 65536 or lines * k * k > 2 * MAX_WALK:
        return None  # lines of very unequal lengths (padding would waste), or too many pairs
    # each vertex's multi-index modulo k, and packed in base 2k (a difference of two packed
    # numbers, plus k in every digit, keeps each digit's difference without a borrow)
    index = np.arange(nv, dtype=np.int64)
    digits = np.empty((dims, nv), dtype=np.int64)
    for d in range(dims - 1, -1, -1):
        index, digits[d] = np.divmod(index, shape[d])
    digits %= k
    base = 2 * k
    packed = (base ** np.arange(dims - 1, -1, -1, dtype=np.int64)) @ digits
    # the lines as rows of a (lines, k) table, each line's entries first, padded with -1;
    # then every pair i < j of the entries of one line (a·δ ≡ 0 iff a·(-δ) ≡ 0: one of the
    # two orders is enough), whose packed difference goes to the last bin when j is padding
    first, second = np.triu_indices(k, 1)
    shift = int(k * (base ** np.arange(dims, dtype=np.int64)).sum())
    if ib.size == lines * k:  # every line full (Gray-Scott's): no padding
        table = packed[ib].reshape(lines, k)
        key = table[:, second] - table[:, first]
        key += shift
    else:
        line = np.repeat(np.arange(lines, dtype=np.int64), lengths)
        table = np.full((lines, k), -1, dtype=np.int64)
        table[line, np.arange(ib.size, dtype=np.int64) - pb[line]] = packed[ib]
        later = table[:, second]
        key = np.where(later >= 0, later - table[:, first] + shift, base**dims)
    seen = np.flatnonzero(np.bincount(key.ravel(), minlength=base**dims + 1)[:-1])
    # back to per-dimension residues modulo k
    power = base ** np.arange(dims - 1, -1, -1, dtype=np.int64)
    deltas = ((seen[:, None] // power) % base - k) % k
    if (deltas == 0).all(axis=1).any():  # two vertices of one line alike modulo k everywhere
        return None
    candidates = (np.arange(k**dims, dtype=np.int64)[:, None]
                  // k ** np.arange(dims - 1, -1, -1, dtype=np.int64)) % k
    good = np.flatnonzero(((candidates @ deltas.T) % k != 0).all(axis=1))
    if good.size == 0:
        return None
    return (candidates[good[0]] @ digits) % k
