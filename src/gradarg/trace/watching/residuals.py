"""Residual branches added to a stream without normalisation, read once from the graph of a
block's first ``backward()`` (by :class:`.lossnodes.LossNodes`, a whole-graph reader).

A block ``x + f(x)`` has the Jacobian ``I + J_f``: with ``f`` initialised at its usual scale,
each block adds to the stream a term about as large as the stream itself, so its variance, and
the gradient flowing back through it, grow with every block, and nothing in a stack of them
rescales (He et al., 2016; Zhang, Dauphin and Ma, 2019, "Fixup Initialization": scale each
branch down at initialisation, or normalise).  What the graph shows: ``AddBackward0`` nodes
whose second input reaches their first within a few nodes (the branch ``f`` computed from the
stream), and no normalisation node anywhere in the graph.

Imports ``trace.graph.nodes`` only.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ..graph.nodes import Graph, node_class

__all__ = ["BRANCH", "NORMS", "Residuals", "residual_adds"]

BRANCH = 8  # nodes walked down a branch looking for the stream it was computed from
NORMS = frozenset({"NativeLayerNormBackward0", "NativeBatchNormBackward0",
                   "CudnnBatchNormBackward0", "NativeGroupNormBackward0",
                   "FusedRmsNormBackward0", "RmsNormBackward0", "LinalgVectorNormBackward0",
                   "NormBackward1", "RsqrtBackward0"})
"""Nodes of a normalisation (layer, batch, group, RMS norm, or a norm computed by hand)."""


class Residuals(NamedTuple):
    """``adds`` residual additions ``x + f(x)`` in a graph without normalisation nodes."""

    adds: int


def _reaches(start: Any, target: Any) -> bool:
    todo, seen = [start], set[int]()
    while todo and len(seen) < BRANCH:
        n = todo.pop(0)
        if n is target:
            return True
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        todo.extend(c for c, _ in n.next_functions if c is not None)
    return False


def residual_adds(graph: Graph) -> Residuals | None:
    """The residual additions of ``graph`` when it has at least two and no node of
    :data:`NORMS`; ``None`` otherwise."""
    adds = 0
    for n in graph.nodes:
        kind = node_class(n)
        if kind in NORMS:
            return None
        if kind != "AddBackward0" or len(n.next_functions) != 2:
            continue
        (a, _), (b, _) = n.next_functions
        if a is not None and b is not None and (_reaches(b, a) or _reaches(a, b)):
            adds += 1
    return Residuals(adds) if adds >= 2 else None
