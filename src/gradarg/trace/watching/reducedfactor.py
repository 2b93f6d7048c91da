"""A per-example factor computed from a loss already reduced to one number: ``exp(-L)`` where
``L`` is a loss function's mean (or sum) over many elements, read from the saved values of the
loss's first autograd nodes at the ``backward()`` call.

The focal loss (Lin et al., 2017, "Focal Loss for Dense Object Detection", eq. 4) weighs each
element by ``(1 - p_t) ** gamma`` with ``p_t = exp(-ce)`` of *that element's* cross-entropy.
Computed from the batch's reduced loss instead (``bce = BCEWithLogitsLoss()(out, y)``, ``pt =
exp(-bce)``), ``p_t`` is one number: the factor weighs every example and label alike, nothing
is down-weighted, and the loss, a function of ``L`` alone, has the gradient of ``L`` times a
positive constant.  What the graph shows: an ``ExpBackward0`` of one entry over a
``NegBackward0`` over a loss node that saved a ``reduction`` of mean or sum and an input of more
than one entry.

Imports :func:`gradarg.trace.graph.nodes.saved_value` only.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import torch

from ..graph.nodes import saved_value

__all__ = ["LOSSES", "ReducedFactor", "factor_of_reduced", "reduced_terms"]

LOSSES = {"BinaryCrossEntropyWithLogitsBackward0": "binary_cross_entropy_with_logits",
          "BinaryCrossEntropyBackward0": "binary_cross_entropy",
          "NllLossBackward0": "nll_loss (cross_entropy)",
          "NllLoss2DBackward0": "nll_loss (cross_entropy)", "MseLossBackward0": "mse_loss",
          "SmoothL1LossBackward0": "smooth_l1_loss", "HuberLossBackward0": "huber_loss"}
_REDUCTIONS = {1: "mean", 2: "sum"}  # ATen's Reduction enum: None 0, Mean 1, Sum 2


class ReducedFactor(NamedTuple):
    """``loss``: the function reduced (:data:`LOSSES`); ``how``: ``"mean"`` or ``"sum"``;
    ``elements``: the terms reduced (its target's entries); ``pt``: ``exp(-L)``, the one number."""

    loss: str
    how: str
    elements: int
    pt: float


def reduced_terms(loss: Any) -> tuple[str, int] | None:
    """``("mean" | "sum", terms)`` for a loss node that saved a ``reduction`` of mean or sum:
    the terms reduced are its target's entries (one per example for ``cross_entropy``), else
    its input's; ``None``: no such reduction, or nothing saved to count."""
    reduction = saved_value(loss, "_saved_reduction", hooked=False)
    how = _REDUCTIONS.get(reduction) if isinstance(reduction, int) else None
    if how is None:
        return None
    for attr in ("_saved_target", "_saved_self"):
        x = saved_value(loss, attr, hooked=False)
        if isinstance(x, torch.Tensor):
            return how, x.numel()
    return None


def factor_of_reduced(node: Any) -> ReducedFactor | None:
    """For an ``ExpBackward0`` of one entry computing ``exp(-L)`` of a loss ``L`` of
    :data:`LOSSES` reduced (mean or sum) over more than one element, :class:`ReducedFactor`;
    else ``None``."""
    if type(node).__name__ != "ExpBackward0" or len(node.next_functions) != 1:
        return None
    neg = node.next_functions[0][0]
    if type(neg).__name__ != "NegBackward0" or len(neg.next_functions) != 1:
        return None
    loss = neg.next_functions[0][0]
    name = LOSSES.get(type(loss).__name__)
    reduced = reduced_terms(loss) if name else None
    out = saved_value(node, "_saved_result", hooked=False)
    if not (reduced is not None and reduced[1] > 1 and isinstance(out, torch.Tensor)
            and out.numel() == 1):
        return None
    return ReducedFactor(name or "", reduced[0], reduced[1], float(out.detach()))
