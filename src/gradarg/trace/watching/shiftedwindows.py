"""Shifted-window attention without its mask: a feature map cyclically shifted with
``torch.roll`` before it is cut into windows (Swin Transformer's shifted windows; Liu et al.,
2021, "Swin Transformer: Hierarchical Vision Transformer using Shifted Windows", section 3.2),
whose window attention adds no mask to its scores.  The roll brings tokens from opposite borders
into the last windows along each shifted axis; Swin's mask stops them attending to each other.
Without it attention wraps around the image: a token reads the opposite edge.  Every gradient is
finite and nonzero.

Seen here, once per block, from the graph of its first ``backward()`` (by
:class:`.lossnodes.LossNodes`): an attention softmax (``SoftmaxBackward0`` over the last
dimension) whose scores come straight from a matrix product (through views and scalings: no
``masked_fill``, ``where`` or added constant in between), whose queries come, through views,
splits and the ``qkv`` projection only, from a ``RollBackward0`` with a nonzero shift.  A
global attention after a roll (every token in one window, which needs no mask) is not told
apart: the roll there has no purpose.

Imports ``trace.graph.nodes`` (a node's saved values) and :mod:`.finding` only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import torch

from ..graph.nodes import MOVES, reach, saved_value
from .finding import Finding, Options

if TYPE_CHECKING:
    from ..graph.nodes import Graph
    from .watch import GradWatch

__all__ = ["Unmasked", "shifted_unmasked", "unmasked_shift"]

_SOFTMAX = ("SoftmaxBackward0", "SafeSoftmaxBackward0")
_SCALED = MOVES | {"MulBackward0", "DivBackward0"}  # views and scalings of the scores
_MATMUL = frozenset({"BmmBackward0", "MmBackward0", "MatmulBackward0"})
# from the product's operands down to the feature map: reshapes, the qkv split and projection
_TO_MAP = _SCALED | {"SelectBackward0", "SliceBackward0", "SplitBackward0", "UnbindBackward0",
                    "SplitWithSizesBackward0", "AddmmBackward0", "AddBackward0", "TBackward0",
                    "ConstantPadNdBackward0"}
_DEPTH = 16


class Unmasked(NamedTuple):
    """A window attention over ``window`` tokens, on a map rolled by ``shifts`` over
    ``dims``, with no mask on its scores."""

    shifts: tuple[int, ...]
    dims: tuple[int, ...]
    window: int


def _scores_unmasked(softmax: Any) -> Any | None:
    """The matrix product whose result reaches ``softmax`` through views and scalings only."""
    return reach(softmax, _MATMUL, _SCALED, 6)


def _roll_below(product: Any) -> Any | None:
    """A ``RollBackward0`` reached from the product's operands through reshapes, splits and a
    projection only (the ``AddmmBackward0`` of ``nn.Linear``: its input, not its weight)."""
    return reach(product, {"RollBackward0"}, _TO_MAP, _DEPTH)


def unmasked_shift(graph: Graph) -> Unmasked | None:
    """The first window attention on a rolled map with no mask on its scores (see the
    module), or ``None``."""
    for node in graph.nodes:
        if type(node).__name__ not in _SOFTMAX:
            continue
        # freed, or saved through hooks (reading those would recompute a checkpoint): None
        att = saved_value(node, "_saved_result", hooked=False)
        dim = saved_value(node, "_saved_dim", hooked=False)
        if not isinstance(att, torch.Tensor) or att.dim() < 2 or dim not in (-1, att.dim() - 1):
            continue
        product = _scores_unmasked(node)
        roll = None if product is None else _roll_below(product)
        if roll is None:
            continue
        shifts = saved_value(roll, "_saved_shifts")  # ints, signed back by saved_value
        dims = saved_value(roll, "_saved_dims")
        if isinstance(shifts, tuple) and isinstance(dims, tuple) and any(shifts):
            return Unmasked(shifts, dims, int(att.shape[-1]))
    return None


def shifted_unmasked(w: GradWatch, o: Options) -> Finding:
    """A shifted-window attention with no mask on its scores (a problem)."""
    del o
    u: Unmasked | None = w.lossnodes.found.get("shifted")
    if u is None:
        return Finding("shifted windows", True)
    return Finding("shifted windows", True, (
        f"a window attention runs on a feature map rolled by {u.shifts} over dims {u.dims} "
        f"(torch.roll: a cyclic shift, Swin's shifted windows) with no mask on its scores "
        f"(observed: the scores go from q @ k.T to the softmax with nothing added or filled in "
        f"between; windows of {u.window} tokens): the roll brings tokens from "
        f"opposite borders into the last windows along each shifted axis, and without the "
        f"mask they attend to each other, so attention wraps around the image; add the "
        f"shifted windows' attention mask (a large negative score, Swin's -100, between "
        f"tokens from different regions of the unshifted map) to the scores before the "
        f"softmax"))
