"""A loss whose target carries gradient into the model, read from the last ``backward()``'s
graph when the block ends (the nodes and their edges outlive the backward; only saved tensors
are freed).

torch's regression and binary losses name their second argument the *target*: ``mse_loss``,
``smooth_l1_loss``, ``huber_loss``, ``binary_cross_entropy`` and
``binary_cross_entropy_with_logits`` record it as the second edge of their autograd node
(``MseLossBackward0`` and the others; ``l1_loss`` and ``kl_div`` are decomposed into other
operations and are not read).  When that edge leads to a parameter of the watched model, the
parameters also get the gradient of the target: right for a loss between two outputs meant to
move together, wrong for a target meant to be fixed (a bootstrapped Q-learning target, a
teacher's output), which is detached or computed under ``torch.no_grad()``.  A target made
the same way as the input (the same operations down to the parameters: a second forward of
the model, as a Pi-model's consistency term compares two perturbed passes) is a symmetric
term, both sides meant to move (``same_way``).

Imports nothing of the trace room.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..graph.nodes import Graph, accumulator, children, is_leaf, node_class

__all__ = ["LOSSES", "TargetGrad", "find", "path"]

LOSSES = {
    "MseLossBackward0": "mse_loss",
    "SmoothL1LossBackward0": "smooth_l1_loss",
    "HuberLossBackward0": "huber_loss",
    "BinaryCrossEntropyBackward0": "binary_cross_entropy",
    "BinaryCrossEntropyWithLogitsBackward0": "binary_cross_entropy_with_logits",
}


@dataclass(frozen=True)
class TargetGrad:
    """A loss (``loss``: the torch function) whose target leads to the parameters ``names``
    of the model in the graph; ``input_too``: its input leads to parameters as well;
    ``same_way``: the target is made by the same operations as the input (:func:`path`)."""

    loss: str
    names: tuple[str, ...]
    input_too: bool
    same_way: bool = False


def path(node: Any, depth: int = 12) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The operations from ``node`` down: each node's class with its inputs' classes, along
    the first input that is an operation (not a leaf) at each node, ``depth`` nodes at most."""
    out: list[tuple[str, tuple[str, ...]]] = []
    while node is not None and len(out) < depth:
        edges = [e for e, _ in children(node)]
        out.append((node_class(node), tuple(node_class(e) if e is not None else "-"
                                            for e in edges)))
        node = next((e for e in edges if e is not None and not is_leaf(e)), None)
    return tuple(out)


def find(graph: Graph | None, owner: Mapping[Any, Any]) -> list[TargetGrad]:
    """The losses in ``graph`` (``trace.graph.nodes.Graph`` of the losses a ``backward()``
    was given; ``None``: none) whose target leads to a parameter of ``owner`` (parameter ->
    ``(name, ...)``)."""
    if graph is None:
        return []
    accs: dict[Any, str] = {}
    for p, entry in owner.items():
        if p.requires_grad and p.grad_fn is None:
            try:
                accs[accumulator(p)] = entry[0]
            except RuntimeError:  # not a leaf that requires grad
                continue

    def reached(node: Any) -> list[str]:
        below = graph.reachable(start=[graph.index[node]])
        return [accs[graph.nodes[k]] for k in sorted(below) if graph.nodes[k] in accs]

    found: list[TargetGrad] = []
    for node in graph.nodes:
        kind = LOSSES.get(node_class(node))
        edges = children(node)
        if kind is None or len(edges) < 2 or edges[1][0] is None:
            continue
        names = reached(edges[1][0])
        if names:
            first = edges[0][0]
            inputs = reached(first) if first is not None else []
            same = bool(inputs) and first is not edges[1][0] and inputs == names \
                and path(first) == path(edges[1][0])
            found.append(TargetGrad(kind, tuple(names), bool(inputs), same))
    return found
