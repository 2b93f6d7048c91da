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
teacher's output), which is detached or computed under ``torch.no_grad()``.

Imports nothing of the trace room.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from torch.autograd.graph import get_gradient_edge

__all__ = ["LOSSES", "TargetGrad", "find"]

LOSSES = {
    "MseLossBackward0": "mse_loss",
    "SmoothL1LossBackward0": "smooth_l1_loss",
    "HuberLossBackward0": "huber_loss",
    "BinaryCrossEntropyBackward0": "binary_cross_entropy",
    "BinaryCrossEntropyWithLogitsBackward0": "binary_cross_entropy_with_logits",
}
_WALK = 50_000  # nodes visited at most, in all


@dataclass(frozen=True)
class TargetGrad:
    """A loss (``loss``: the torch function) whose target leads to the parameters ``names``
    of the model in the graph; ``input_too``: its input leads to parameters as well."""

    loss: str
    names: tuple[str, ...]
    input_too: bool


def _reach(start: Any, accs: Mapping[Any, str], budget: list[int]) -> list[str]:
    """The parameters (by name) whose ``AccumulateGrad`` is reachable from ``start``."""
    found: dict[str, None] = {}
    seen, todo = {start}, [start]
    while todo and budget[0] > 0:
        node = todo.pop()
        budget[0] -= 1
        name = accs.get(node)
        if name is not None:
            found[name] = None
            continue
        for nxt, _ in node.next_functions:
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return list(found)


def find(roots: Iterable[Any], owner: Mapping[Any, Any]) -> list[TargetGrad]:
    """The losses below ``roots`` (autograd nodes of the losses a ``backward()`` was given)
    whose target leads to a parameter of ``owner`` (parameter -> ``(name, ...)``)."""
    accs: dict[Any, str] = {}
    for p, entry in owner.items():
        if p.requires_grad and p.grad_fn is None:
            try:
                accs[get_gradient_edge(p).node] = entry[0]
            except RuntimeError:  # not a leaf that requires grad
                continue
    budget = [_WALK]
    found: list[TargetGrad] = []
    seen = set(roots)
    todo = list(seen)
    while todo and budget[0] > 0:
        node = todo.pop()
        budget[0] -= 1
        kind = LOSSES.get(type(node).__name__)
        edges = node.next_functions
        if kind is not None and len(edges) >= 2 and edges[1][0] is not None:
            names = _reach(edges[1][0], accs, budget)
            if names:
                first = edges[0][0]
                found.append(TargetGrad(kind, tuple(names), bool(
                    first is not None and _reach(first, accs, budget))))
        for nxt, _ in edges:
            if nxt is not None and nxt not in seen and nxt not in accs:
                seen.add(nxt)
                todo.append(nxt)
    return found
