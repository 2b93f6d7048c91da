"""A ``relu`` applied to a layer's output in the loss, after the model's last parameters: the
entries it sets to 0 get an exactly zero gradient.

``relu``'s derivative is 0 below 0 (https://docs.pytorch.org/docs/stable/generated/torch.nn.ReLU.html):
a loss that needs positive values (the evidence of an evidential classifier, ``alpha =
relu(logits) + 1``; a rate or a scale) and makes them with ``relu`` of the last layer's output
gives no gradient to the outputs below 0, so those never learn to rise; ``softplus`` or
``exp`` keep a gradient everywhere.  A ``relu`` of something else than a layer's output (a
hinge, ``relu(margin - score)``, whose zero gradient past the margin is meant) is not named.

Seen here, once per block, from the graph of its first ``backward()`` (by
:class:`.lossnodes.LossNodes`, while saved values are held): walking from the loss towards the
model, before any operation that uses a parameter, a ``ReluBackward0`` whose input is such an
operation and whose result feeds no such operation (else it is a hidden activation, a sparse
autoencoder's code penalised in the loss too), with a quarter or more of its saved result at 0.

Imports ``trace.graph.nodes`` and :mod:`.finding` only.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any, NamedTuple

import torch

from ..graph.nodes import MOVES, Graph, children, is_leaf, node_class, saved_value
from .finding import Finding, Options

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = ["OutputRelu", "output_relu", "relu_of_output"]

SHARE = 0.25  # the least share of entries the relu set to 0


class OutputRelu(NamedTuple):
    """A ``relu`` of the output of a layer (``layer``: its operation) in the loss: ``zero`` of
    its ``n`` entries at 0."""

    layer: str
    zero: int
    n: int


def _uses_parameter(node: Any) -> bool:
    """Whether ``node`` takes a parameter as an input, directly or through one view
    (``TBackward0`` of a linear layer's weight)."""
    for child, _ in children(node):
        if child is None:
            continue
        if is_leaf(child) or (node_class(child) in MOVES and any(
                c is not None and is_leaf(c) for c, _ in children(child))):
            return True
    return False


def relu_of_output(graph: Graph) -> OutputRelu | None:
    """The first such ``relu`` between the loss (``graph.nodes[0]``) and the parameters."""
    if not graph.nodes:
        return None
    # a relu whose result also feeds a layer is a hidden activation of the model (a sparse
    # autoencoder's code, penalised in the loss too), not a map made for the loss
    feeds = {c for n in graph.nodes if not is_leaf(n) and _uses_parameter(n)
             for c, _ in children(n) if c is not None}
    seen, todo = set(), deque([graph.nodes[0]])
    while todo:
        node = todo.popleft()
        if node in seen or is_leaf(node):
            continue
        seen.add(node)
        if _uses_parameter(node):
            continue  # the model's last parameters: stop on this path
        below = [c for c, _ in children(node) if c is not None]
        if node_class(node) == "ReluBackward0" and len(below) == 1 \
                and _uses_parameter(below[0]) and node not in feeds:
            result = saved_value(node, "_saved_result")
            if isinstance(result, torch.Tensor) and result.numel() >= 8:
                zero = int((result == 0).sum())
                if zero >= SHARE * result.numel():
                    return OutputRelu(node_class(below[0]), zero, result.numel())
        todo.extend(below)
    return None


def output_relu(w: GradWatch, o: Options) -> Finding:
    """A ``relu`` of a layer's output in the loss that set a quarter or more to 0 (a
    problem)."""
    r = w.lossnodes.found.get("outrelu")
    if r is None:
        return Finding("relu in the loss", True)
    return Finding("relu in the loss", True, (
        f"a relu applied to the output of the model's last layer ({r.layer}) in the loss is 0 "
        f"at {r.zero} of its {r.n} entries (observed: its saved result at the block's first "
        f"backward): relu's derivative is 0 below 0, so those outputs get no gradient from "
        f"the loss and never rise back; where the loss needs a positive value (an evidence, "
        f"a rate, a scale) make it with softplus or exp, which keep a gradient everywhere"))
