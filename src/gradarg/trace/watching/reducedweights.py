"""Per-example weights multiplied into a loss that was already reduced to one number,
``(F.cross_entropy(out, y) * w).mean()``, read from the saved values of the loss's first
autograd nodes at the ``backward()`` call.  The product broadcasts the one number against the
weights, so every example's gradient is scaled by the same factor, the weights' mean (or
sum): no example is weighted by its own weight.  ``reduction='none'``, then the product, then
the reduction weights each example.

Imports :func:`gradarg.trace.graph.nodes.saved_value` only.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import torch

from ..graph.nodes import saved_value

__all__ = ["REDUCED", "Reduced", "weights_after_reduction"]

# loss nodes that save their reduction (0 none, 1 mean, 2 sum), and full reductions
REDUCED = {"NllLossBackward0": "nll_loss (cross_entropy)", "NllLoss2DBackward0": "nll_loss",
           "MseLossBackward0": "mse_loss", "L1LossBackward0": "l1_loss",
           "SmoothL1LossBackward0": "smooth_l1_loss", "HuberLossBackward0": "huber_loss",
           "BinaryCrossEntropyBackward0": "binary_cross_entropy",
           "BinaryCrossEntropyWithLogitsBackward0": "binary_cross_entropy_with_logits",
           "MeanBackward0": "mean()", "SumBackward0": "sum()"}
_HOW = {1: "mean", 2: "sum"}


class Reduced(NamedTuple):
    """The loss ``loss`` (its function, reduced by ``how``: ``"mean"`` or ``"sum"``) times a
    tensor of ``shape`` without autograd history whose entries' mean is ``mean``."""

    loss: str
    how: str
    shape: tuple[int, ...]
    mean: float


def weights_after_reduction(node: Any) -> Reduced | None:
    """For a ``MulBackward0`` whose one live operand is a loss reduced to one number
    (:data:`REDUCED`) and whose other operand is a saved tensor of two or more entries that
    needs no gradient, what it multiplied (:class:`Reduced`); ``None`` otherwise."""
    if type(node).__name__ != "MulBackward0" or len(node.next_functions) != 2:
        return None
    live = [i for i, (c, _) in enumerate(node.next_functions) if c is not None]
    if len(live) != 1:
        return None
    loss = node.next_functions[live[0]][0]
    name = type(loss).__name__
    if name not in REDUCED:
        return None
    reduction = saved_value(loss, "_saved_reduction", hooked=False)
    how = ("mean" if name == "MeanBackward0" else "sum" if name == "SumBackward0"
           else _HOW.get(reduction) if isinstance(reduction, int) else None)
    w = saved_value(node, ("_saved_other", "_saved_self")[live[0]], hooked=False)
    if (how is None or not isinstance(w, torch.Tensor) or w.requires_grad
            or not w.is_floating_point() or w.numel() < 2):
        return None
    return Reduced(REDUCED[name], how, tuple(w.shape), float(w.detach().float().mean()))
