"""``grid_sample`` reading most of its points outside its input, read once from the graph of a
block's first ``backward()`` (by :class:`.lossnodes.LossNodes`, while the saved grid is held).

``torch.nn.functional.grid_sample``'s grid is normalised: ``-1`` and ``1`` are the input's
edges in each dimension (https://docs.pytorch.org/docs/stable/generated/torch.nn.functional.grid_sample.html).
A point beyond them reads the padding: zeros by default (``padding_mode='zeros'``), whose
gradient to the input and to the grid is zero; with ``padding_mode='border'`` the coordinate is
clamped to the edge and its gradient to the grid is zero too.  A grid built in pixel units (a
base grid plus an optical flow, as warping code often writes it) sends most points there.

Seen here: a ``GridSampler2DBackward0`` / ``GridSampler3DBackward0`` node whose saved grid has
half of its points or more with a coordinate beyond ``[-1, 1]`` (padding ``zeros``), or half
of its coordinates beyond it (``border``); ``reflection`` folds them back inside.

Imports ``trace.graph.nodes`` and :mod:`.finding` only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import torch

from ..graph.nodes import Graph, node_class, saved_value
from .finding import Finding, Options

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = ["GridOutside", "grid_outside", "grid_sampled"]

NODES = ("GridSampler2DBackward0", "GridSampler3DBackward0")
PADDING = {0: "zeros", 1: "border", 2: "reflection"}  # grid_sample's padding_mode, as saved


class GridOutside(NamedTuple):
    """``outside`` of ``points`` sample points with a coordinate beyond ``[-1, 1]``
    (``padding`` ``'zeros'``), or of ``points`` coordinates beyond it (``'border'``: each
    coordinate is clamped on its own); the largest ``|coordinate|``: ``largest``."""

    outside: int
    points: int
    padding: str
    largest: float


def grid_outside(graph: Graph) -> GridOutside | None:
    """The first ``grid_sample`` of ``graph`` that reads half of its points or more outside
    its input, or None."""
    for node in graph.nodes:
        if node_class(node) not in NODES:
            continue
        grid, mode = saved_value(node, "_saved_grid"), saved_value(node, "_saved_padding_mode")
        padding = PADDING.get(mode, "zeros") if isinstance(mode, int) else "zeros"
        if not isinstance(grid, torch.Tensor) or not grid.numel() or padding == "reflection":
            continue
        with torch.no_grad():
            size = grid.detach().reshape(-1, grid.shape[-1]).abs().float()
            beyond = size > 1  # zeros: a point with one coordinate beyond reads only zeros
            out = beyond.any(dim=1) if padding == "zeros" else beyond.reshape(-1)
            count = int(out.sum())
        if count * 2 >= out.numel():
            return GridOutside(count, out.numel(), padding, float(size.max()))
    return None


def grid_sampled(w: GradWatch, o: Options) -> Finding:
    """A ``grid_sample`` that read most of its points outside its input (a problem)."""
    g = w.lossnodes.found.get("grid")
    if g is None:
        return Finding("grid_sample range", True)
    if g.padding == "zeros":
        what = f"{g.outside} of {g.points} sample points outside its input (a grid coordinate"
        reads = "points read zeros, so their gradient to the input and the grid is zero"
    else:
        what = f"{g.outside} of {g.points} grid coordinates outside its input (beyond"
        reads = "coordinates are clamped to the edge, so their gradient is zero"
    return Finding("grid_sample range", True, (
        f"grid_sample read {what} beyond [-1, 1], the largest {g.largest:.3g}; observed: the "
        f"grid its backward saved): its grid is normalised, -1 and 1 the input's edges, and "
        f"with padding_mode='{g.padding}' those {reads}; a grid in pixel units (a base "
        f"grid plus a flow) must be normalised, 2 * x / (W - 1) - 1 with align_corners=True"))
