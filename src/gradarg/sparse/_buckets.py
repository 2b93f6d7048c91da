"""Bucket queues: one doubly linked list of vertices per integer key, compiled on first use.

``head[b]`` / ``tail[b]`` are the first and last vertex of bucket ``b`` (``-1``: empty),
``nxt[v]`` / ``prv[v]`` a vertex's neighbours in its list.  Vertices are appended at the tail
and taken from the head (first in, first out), so that the orders built on them are
deterministic: the vertex orders of :mod:`gradarg.sparse.greedy` and DSATUR's queue in
:mod:`gradarg.sparse.d2color`.  Inlined into the kernels that call them
(:mod:`gradarg.sparse._numba`).
"""

from __future__ import annotations

from ._numba import lazy_njit

__all__ = ["append", "unlink"]


@lazy_njit(inline=True)
def unlink(head, tail, nxt, prv, b, v):  # pragma: no cover - compiled
    """Take vertex ``v`` out of bucket ``b``."""
    if prv[v] >= 0:
        nxt[prv[v]] = nxt[v]
    else:
        head[b] = nxt[v]
    if nxt[v] >= 0:
        prv[nxt[v]] = prv[v]
    else:
        tail[b] = prv[v]


@lazy_njit(inline=True)
def append(head, tail, nxt, prv, b, v):  # pragma: no cover - compiled
    """Put vertex ``v`` at the tail of bucket ``b``."""
    nxt[v] = -1
    prv[v] = tail[b]
    if tail[b] >= 0:
        nxt[tail[b]] = v
    else:
        head[b] = v
    tail[b] = v
