"""What is read from the last ``backward()``'s graph when the watch's block ends, before the
graph is let go: the losses whose target leads to parameters (:mod:`.targets`) and a parameter
table read only through integer indices (:mod:`.rowselect`), from one walk of the graph
(``trace.graph.nodes.Graph``) shared by both.

Imports ``trace.graph.nodes``, :mod:`.targets` and :mod:`.rowselect` only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..graph.nodes import Graph
from .rowselect import RowSelect, find_selected
from .targets import TargetGrad, find

__all__ = ["read"]


def read(roots: Iterable[Any], owner: Mapping[Any, tuple[str, str]]
         ) -> tuple[list[TargetGrad], RowSelect | None]:
    """For the autograd nodes ``roots`` of the last ``backward()``'s losses and the watched
    parameters ``owner`` (parameter -> ``(name, module name)``): the targets that lead to
    parameters and the first row-selected table; ``([], None)`` for a graph that cannot be
    read (nothing is said of it)."""
    roots = [n for n in roots if n is not None]
    try:
        graph = Graph(*roots) if roots else None
        return find(graph, owner), find_selected(graph, owner)
    except Exception:  # noqa: BLE001 (a graph that cannot be read: nothing said)
        return [], None
