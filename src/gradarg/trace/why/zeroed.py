"""Why a gradient is exactly zero, where the traced pass shows more than the node that sent the
zeros: a ``sigmoid`` / ``tanh`` saturated at its limits (:func:`saturated`), and, where no node
sent zeros, a hook that replaced a tensor's gradient or uses that cancel (:func:`zeroed_between`).
Used by :mod:`.causes` for its ``"zero"`` answers.

Imports :func:`gradarg.trace.graph.nodes.saved_value`, :func:`gradarg.trace.graph.values.dense_values`
and :mod:`.context` only.
"""

from __future__ import annotations

import operator
from functools import reduce

import torch

from ..graph.nodes import saved_value
from ..graph.values import dense_values
from .context import Context

__all__ = ["saturated", "zeroed_between"]


def saturated(fn: object, arrived: torch.Tensor | None, op: str,
               limits: tuple[float, ...]) -> str:
    """Why a squashing function (``sigmoid``, ``tanh``) sent zeros: at every entry where a
    nonzero cotangent arrived, the output it saved is exactly one of its ``limits``, where its
    derivative computed from the output is 0; ``""`` when the saved output does not show it."""
    out = saved_value(fn, "_saved_result")
    if not isinstance(out, torch.Tensor) or arrived is None or out.shape != arrived.shape:
        return ""
    reached = dense_values(arrived) != 0
    at = torch.zeros_like(out, dtype=torch.bool)
    for limit in limits:
        at |= out == limit
    if not bool(reached.any()) or not bool(at[reached].all()):
        return ""
    ends = " or ".join(f"{v:g}" for v in limits)
    fix = ("compute the loss from the logits instead (BCEWithLogitsLoss, F.logsigmoid), or "
           "scale or normalise its inputs" if op == "sigmoid" else
           "scale or normalise its inputs (a smaller initialisation, a normalisation layer "
           "before it)")
    count = int(reached.sum())
    where = "at the one entry" if count == 1 else f"at each of the {count} entries"
    return (f" (a saturated {op}: {where} the cotangent reached, its output is exactly "
            f"{ends} in {str(out.dtype).removeprefix('torch.')}, "
            f"where its derivative, computed from the output, is 0: its inputs lay so far "
            f"from 0 that the output rounded to its limit; {fix})")


def zeroed_between(c: Context) -> tuple[str, str | None]:
    """Where no node sent zeros (:func:`zero_node`): the first node towards the tensor whose
    incoming gradients are nonzero while what it received is all zero (a hook on that tensor
    replaced it), or whose incoming gradients, nonzero each, sum to exactly zero (they
    cancel: ``a - a``); ``("", None)`` when the pass shows neither."""
    trace, target = c.trace, c.position
    towards = c.graph.ancestors(target) | {target}
    into: dict[int, list[torch.Tensor]] = {}  # node -> what its incoming edges carried
    for e in trace.edges:
        if e.dst in towards and e.cotangent is not None:
            into.setdefault(e.dst, []).append(e.cotangent)
    order = [n for n in trace.executed if n.key in towards and n.key != target]
    for n in [*order, trace.nodes[target]]:  # the tensor's own node last (a leaf's never runs)
        parts = into.get(n.key)
        if not parts:
            continue
        total = reduce(operator.add, parts)  # what trace.incoming(n.key) sums
        got = n.arrived if n.key != target or c.tensor.grad_fn is not None else c.pass_grad
        nonzero = [bool((dense_values(p) != 0).any()) for p in parts]
        if bool((dense_values(total) != 0).any()):
            if got is None or not bool((dense_values(got) != 0).any()):
                what = (c.xname if n.key == target else f"the output of {n.label}")
                return (f"; the gradients sent to {what} are nonzero, but what arrived is "
                        f"all zero: a hook on that tensor (tensor.register_hook, or a "
                        f"module's backward hook) replaced its gradient with zeros"), n.label
        elif len(parts) >= 2 and sum(nonzero) >= 2:
            what = c.xname if n.key == target else f"the output of {n.label}"
            return (f"; the {len(parts)} gradients reaching {what}, nonzero each, sum to "
                    f"exactly zero: its uses cancel (as in a - a, or x * 2 - x - x), so the "
                    f"output does not depend on it there"), n.label
    return "", None
