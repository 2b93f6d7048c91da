"""A parameter the forward reads only through integer indices: ``pos_embed[T]`` where
``pos_embed[:T]`` was meant.

Indexing a tensor with an integer selects one row (``torch.select``); with a slice, a range of
rows.  A learned table (positions, prototypes, per-class vectors) read as ``table[T]`` gives
one row, broadcast against the batch, and every other row takes no part: no gradient reaches
them, they never train (https://docs.pytorch.org/docs/stable/tensor_view.html).

Seen here, from the last ``backward()``'s graph when the block ends (its nodes outlive the
backward; only a node's saved integers are read): a parameter of the model with at least four
rows whose every use in the graph is a ``select`` along dimension 0, reaching fewer than half
of its rows.

Imports nothing of the trace room but ``trace.graph``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from ..graph.nodes import Graph, children, saved_value
from .finding import Finding, Options

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = ["RowSelect", "find_selected", "row_select"]

MOST_NODES = 20000


class RowSelect(NamedTuple):
    """Parameter ``name`` of ``rows`` rows, read only as ``name[i]`` for ``rows_read``."""

    name: str
    rows: int
    rows_read: tuple[int, ...]


def find_selected(graph: Graph | None, owner: Mapping[Any, tuple[str, str]]) -> RowSelect | None:
    """The first :class:`RowSelect` in ``graph`` (``trace.graph.nodes.Graph`` of the last
    ``backward()``'s losses; ``None``: none); ``None``: none found."""
    if graph is None or len(graph.nodes) > MOST_NODES:
        return None
    uses: dict[int, list[Any]] = {}  # id(parameter) -> the nodes that use it
    params: dict[int, Any] = {}
    for n in graph.nodes:
        for c, _ in children(n):
            v = getattr(c, "variable", None) if c is not None else None
            if v is not None and v in owner:
                uses.setdefault(id(v), []).append(n)
                params[id(v)] = v
    for key, users in uses.items():
        p = params[key]
        if p.dim() < 2 or p.shape[0] < 4:
            continue
        read = []
        for n in users:
            if type(n).__name__ != "SelectBackward0" or saved_value(n, "_saved_dim") != 0:
                break
            i = saved_value(n, "_saved_index")
            if not isinstance(i, int):
                break
            read.append(i)  # saved_value gives a negative index back its sign
        else:
            rows = sorted({i % p.shape[0] for i in read})
            if 2 * len(rows) < p.shape[0]:
                return RowSelect(owner[p][0], p.shape[0], tuple(rows))
    return None


def row_select(w: GradWatch, o: Options) -> Finding:
    """The :class:`RowSelect` of the block, in words."""
    r = w.row_reads
    if r is None:
        return Finding("integer-indexed parameters", True)
    shown = ", ".join(map(str, r.rows_read[:4])) + (", ..." if len(r.rows_read) > 4 else "")
    return Finding("integer-indexed parameters", True, (
        f"the forward reads {r.name} only through integer indices, {r.name}[i] for row(s) "
        f"{shown} of its {r.rows} (observed: every use of it in the last backward's graph is "
        f"a select along dimension 0), so its other {r.rows - len(r.rows_read)} rows take no "
        f"part and get no gradient; an integer selects one row (broadcast against the batch): "
        f"if the first T rows were meant, slice them, {r.name}[:T]"))
