"""The distance-2 colourings of :mod:`gradarg.sparse.d2color` by rustworkx, on the explicit graph.

A colouring path of its own (``gradarg.sparse._numba.colouring_path("rustworkx")``; forced
only, :mod:`gradarg.sparse.d2color` says why it is not the default): the distance-2 graph,
built by vectorised NumPy (:func:`gradarg.sparse._pycolor.distance2_graph`), is handed to
rustworkx as a Python list of edge tuples, a ``PyGraph``, and coloured by its compiled
``graph_greedy_color``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["RustworkxColouring", "rustworkx_seconds"]


class RustworkxColouring:
    """The explicit distance-2 graph ``(ptr, ind)`` coloured by rustworkx's compiled
    ``graph_greedy_color``: its ``Degree`` strategy is largest-first with ties by index (the
    colouring of :class:`_Compiled`, checked by ``tests/sparse/test_colour_paths.py``), its
    ``Saturation`` strategy DSATUR with ties by most uncoloured neighbours, then its own order
    (not always ours: the colours may differ by one either way)."""

    path = "rustworkx"

    def __init__(self, ptr, ind) -> None:
        import rustworkx as rx  # 3 ms once torch is imported

        self.rx = rx
        self.degree = np.diff(ptr)
        nv = self.degree.size
        owner = np.repeat(np.arange(nv, dtype=np.int64), self.degree)
        keep = owner < ind  # each edge once
        a, b = owner[keep], ind[keep]
        self.graph = rx.PyGraph(multigraph=False, node_count_hint=nv, edge_count_hint=a.size)
        self.graph.add_nodes_from(range(nv))
        self.graph.add_edges_from_no_data(list(zip(a.tolist(), b.tolist(), strict=True)))

    def degrees(self) -> np.ndarray:
        return self.degree

    def _colour(self, strategy) -> np.ndarray:
        found = self.rx.graph_greedy_color(self.graph, strategy=strategy)
        nv = self.degree.size
        colors = np.empty(nv, dtype=np.int64)
        colors[np.fromiter(found.keys(), np.int64, nv)] = np.fromiter(found.values(), np.int64,
                                                                       nv)
        return colors

    def largest_first(self, degree: np.ndarray) -> np.ndarray:
        return self._colour(self.rx.ColoringStrategy.Degree)

    def dsatur(self, degree: np.ndarray) -> np.ndarray | None:
        return self._colour(self.rx.ColoringStrategy.Saturation)


# seconds per stored edge (both directions) and per vertex of a rustworkx colouring of the
# distance-2 graph, largest-first and DSATUR together, the graph's Python edge list included
# (least squares over stencils, bands and random patterns, one thread, process CPU time:
# 1.6e-7 and 0.6e-7; rounded up, for the ski-rental rule when the path is forced)
_RX = (2.0e-7, 1.0e-7)


def rustworkx_seconds(ptr: np.ndarray) -> float:
    """Estimated seconds of :class:`RustworkxColouring`'s colourings of the graph with pointers
    ``ptr`` (both strategies)."""
    return _RX[0] * float(ptr[-1]) + _RX[1] * (len(ptr) - 1)
