"""Soft targets that are the model's own current probabilities: a cross-entropy with probability
targets, or a ``kl_div``, whose targets equal ``softmax`` of the very logits it scores (a
detached copy of the same computation, made again at every step).  Its gradient with respect to
the logits is ``softmax(z) - p = 0``: the term holds nothing in place (Learning without
Forgetting's old-task targets recomputed from the current network instead of recorded once,
self-distillation whose teacher is the student in the same state).  Read from the loss's first
nodes at the ``backward()`` call, before the backward frees what they saved: a ``MulBackward0``
by a constant tensor of probabilities (no autograd history, none negative) whose other
operand comes from a ``LogSoftmaxBackward0`` (through at most one negation or subtraction of a
constant) whose saved output, exponentiated, equals those probabilities.

Imports ``trace.graph.nodes``' ``saved_value`` and :mod:`.slip` only.
"""

from __future__ import annotations

from typing import Any

import torch

from ..graph.nodes import saved_value
from .slip import Slip

__all__ = ["STARTS", "self_targets"]

_MOST = 1 << 22  # entries of the targets read at most
_PASS = ("NegBackward0", "SubBackward0", "RsubBackward1")  # between the log-softmax and the product


# the node classes its scan starts from: with none of them in the nodes given, it finds nothing
STARTS = frozenset({"MulBackward0"})


def self_targets(walked: list[Any]) -> Slip | None:
    """The first product of ``walked`` (a loss's first autograd nodes) of a log-softmax's output
    and targets equal to its own probabilities, as a :class:`~.slip.Slip` ``"self-targets"``:
    ``op`` ``"LogSoftmaxBackward0"``, ``shape`` the scores', ``other`` (the softmax's
    dimension,), ``value`` the largest difference between targets and probabilities;
    ``None``: none."""
    for n in walked:
        if type(n).__name__ != "MulBackward0":
            continue
        logsoftmax = _log_softmax_below(n)
        if logsoftmax is None:
            continue
        result = saved_value(logsoftmax, "_saved_result", hooked=False)
        dim = saved_value(logsoftmax, "_saved_dim", hooked=False)
        if not isinstance(result, torch.Tensor) or not isinstance(dim, int) or result.dim() == 0:
            continue
        for attr in ("_saved_self", "_saved_other"):
            found = _read(saved_value(n, attr, hooked=False), result.detach(), dim % result.dim())
            if found is not None:
                return found
    return None


def _log_softmax_below(node: Any) -> Any | None:
    """The ``LogSoftmaxBackward0`` among ``node``'s inputs, directly or through one node of
    :data:`_PASS` whose other inputs carry no gradient; ``None``: none."""
    for child, _ in node.next_functions:
        for _ in range(2):
            if child is None:
                break
            name = type(child).__name__
            if name == "LogSoftmaxBackward0":
                return child
            if name not in _PASS:
                break
            inner = [c for c, _ in child.next_functions if c is not None]
            child = inner[0] if len(inner) == 1 else None
    return None


def _read(target: Any, result: torch.Tensor, dim: int) -> Slip | None:
    """``target`` as a ``"self-targets"`` slip when it is a tensor of probabilities without
    history, of ``result``'s shape, equal to ``exp(result)`` to rounding."""
    if (not isinstance(target, torch.Tensor) or target.requires_grad
            or tuple(target.shape) != tuple(result.shape) or not target.is_floating_point()
            or not 0 < target.numel() <= _MOST or result.shape[dim] < 2):
        return None
    target = target.detach()
    probs = result.exp()
    if not bool(torch.isfinite(target).all()) or bool((target < 0).any()):
        return None
    eps = torch.finfo(result.dtype).eps
    gap = float((target - probs).abs().max())
    if gap > 64 * eps:
        return None
    return Slip("self-targets", "LogSoftmaxBackward0", tuple(result.shape), (dim,), value=gap)
