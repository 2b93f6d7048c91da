"""Per-example losses the step increases: the gradient that reaches a loss computed with
``reduction='none'`` (read by a prehook on its node, among the loss's first nodes, during the
``backward()`` call: ``torch.autograd.graph.Node.register_prehook``) is the derivative of
the total with respect to each example's loss.  Where it is negative, minimising the total
raises that example's loss: weights computed from the loss itself and kept in the graph
(``exp(-loss / tau)`` for a curriculum: ``w + loss * dw/dloss < 0`` once ``loss > tau``), a
per-example loss subtracted.  A focal loss's factor, also computed from the loss with its
graph, keeps the derivative positive and is not named.

Imports :mod:`.patches`, :mod:`.finding` and ``trace.graph`` only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import torch

from ..graph.nodes import first_nodes, saved_value
from ..graph.values import tensors as _tensors
from . import patches
from .finding import Finding, Options

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = ["Ascent", "LossAscent", "loss_ascent"]

# the nodes of losses whose reduction='none' output holds one loss per example (or entry)
LOSSES = ("NllLossBackward0", "NllLoss2DBackward0", "MseLossBackward0", "L1LossBackward0",
          "SmoothL1LossBackward0", "HuberLossBackward0", "BinaryCrossEntropyBackward0",
          "BinaryCrossEntropyWithLogitsBackward0")
NONE = 0  # torch's Reduction::None, as the nodes save it


class Ascent(NamedTuple):
    """In the last ``backward()``: ``negative`` of the ``entries`` per-example losses of
    ``op`` received a negative gradient (the smallest ``low``)."""

    op: str
    negative: int
    entries: int
    low: float


class LossAscent:
    """The prehooks on the per-example loss nodes of each outermost ``backward()`` call, and
    what the last one found (:attr:`found`)."""

    def __init__(self) -> None:
        self.found: Ascent | None = None
        self._handles: list[Any] = []
        self._hooks: list[Any] = []

    def attach(self) -> None:
        self._handles = [patches.register_backward_call_hook(self._called, outer=True),
                         patches.register_backward_done_hook(self._done, outer=True)]

    def detach(self) -> list[Any]:
        handles, self._handles, self._hooks = self._handles + self._hooks, [], []
        return handles

    def _called(self, tensors: Any) -> None:
        self.found = None
        roots = [t.grad_fn for t in _tensors(tensors) if t.grad_fn is not None]
        for n in first_nodes(roots, 12):
            if (type(n).__name__ in LOSSES
                    and saved_value(n, "_saved_reduction", hooked=False) == NONE):
                self._hooks.append(n.register_prehook(self._read(n)))

    def _read(self, node: Any) -> Any:
        def hook(grad_outputs: Any) -> None:
            g = grad_outputs[0] if grad_outputs else None
            if isinstance(g, torch.Tensor) and g.is_floating_point() and g.numel() > 1:
                k = int((g < 0).sum())
                if k:
                    self.found = Ascent(type(node).__name__, k, g.numel(), float(g.min()))
        return hook

    def _done(self) -> None:
        for h in self._hooks:
            h.remove()
        self._hooks = []


def loss_ascent(w: GradWatch, o: Options) -> Finding:
    """The last ``backward()``'s per-example losses that the step increases, in words (none
    under an optimizer that maximises)."""
    a = w.ascent.found
    if a is None or any(g.get("maximize") for h in w.grads.optimizers
                        for g in h.optimizer.param_groups):
        return Finding("per-example losses", True)
    return Finding("per-example losses", True, (
        f"the total loss falls when {a.negative} of the {a.entries} per-example losses of "
        f"{a.op} (reduction='none') rise: the gradient reaching them is negative there (down to "
        f"{a.low:.3g}; observed: the gradient their node received), so the step increases "
        f"those examples' loss; weights computed from the loss itself and kept in the graph do "
        f"this (a curriculum's exp(-loss / tau): w + loss * dw/dloss < 0 once loss > tau): "
        f"compute the weights from loss.detach()"))
