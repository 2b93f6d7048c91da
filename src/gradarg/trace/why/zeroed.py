"""Why a gradient is exactly zero, from the traced pass: the node where the cotangent towards
the tensor became zero (:func:`zero_node`; a join that only passes zeros on is looked through to
the node that made them, :func:`made_zeros`), a ``sigmoid`` / ``tanh`` saturated at its limits
(:func:`saturated`), and, where no node sent zeros, a hook that replaced a tensor's gradient or
uses that cancel (:func:`zeroed_between`).  Used by :mod:`.causes` for its ``"zero"`` answers.

Imports the graph's node helpers, :mod:`gradarg.trace.graph.operators`,
:func:`gradarg.trace.graph.values.dense_values` and :mod:`.context` only.
"""

from __future__ import annotations

import operator
from functools import reduce
from typing import TYPE_CHECKING

import torch

from ..graph.nodes import Graph, saved_value
from ..graph.operators import row
from ..graph.values import dense_values
from .context import Context

if TYPE_CHECKING:
    from ..tape.traced import BackwardTrace, TracedNode

__all__ = ["made_zeros", "saturated", "zero_node", "zeroed_between"]


def zero_node(trace: BackwardTrace, graph: Graph, target_key: int) -> TracedNode | None:
    """The node where the cotangent towards the target became zero: of the nodes on a path to
    the target that received a nonzero cotangent and sent only zeros towards the target, the
    first (execution order) whose zero edges alone cut every path to it (a model has many
    paths: a zero on one of them, a LoRA adapter of a later layer, is not the cause); else the
    first such node.  A node, not a label: labels repeat (many ``mul`` nodes)."""
    towards = graph.ancestors(target_key) | {target_key}
    found = []
    for n in trace.executed:
        if n.key not in towards or n.key == target_key:
            continue
        got = n.arrived
        if got is None or not bool((dense_values(got) != 0).any()):
            continue
        outs = [e for e in trace.edges if e.src == n.key and e.dst in towards]
        if outs and all(e.cotangent is None or not bool((dense_values(e.cotangent) != 0).any())
                        for e in outs):
            if target_key not in graph.reachable({(e.src, e.slot) for e in outs}):
                return made_zeros(trace, n)
            found.append(n)
    return made_zeros(trace, found[0]) if found else None


def _zero_share(t: torch.Tensor | None) -> float:
    if t is None or t.numel() == 0:
        return 0.0
    return float((dense_values(t) == 0).double().mean())


def made_zeros(trace: BackwardTrace, n: TracedNode) -> TracedNode:
    """The node that made the zeros ``n`` sends, ``n`` itself unless it only routes entries
    (``cat``, ``stack``: :attr:`~gradarg.trace.graph.operators.Operator.routes`): then the zeros
    arrived, and the node above it that sent a cotangent with a larger share of exact zeros
    than it received made them (``max`` choosing entries of another input), looked for
    above the nodes that only passed them on; ``n`` when none did (the zeros came with the
    upstream gradient).
    """
    by_key = {m.key: m for m in trace.nodes}
    cur, seen = n, set()
    while row(cur.op).routes and cur.key not in seen:
        seen.add(cur.key)
        into = [e for e in trace.edges if e.dst == cur.key and e.cotangent is not None]
        maker = None
        for e in into:
            up = by_key[e.src]
            while (_zero_share(e.cotangent) <= _zero_share(up.arrived)
                   and len(ups := [u for u in trace.edges if u.dst == up.key
                                   and u.cotangent is not None]) == 1):
                e, up = ups[0], by_key[ups[0].src]  # it passed the zeros on: look above
            if up.arrived is not None and _zero_share(e.cotangent) > _zero_share(up.arrived):
                maker = up
                break
        if maker is None:
            return cur
        cur = maker
    return cur


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
