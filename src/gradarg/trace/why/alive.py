"""What is still readable once ``backward()`` freed the saved tensors: the values of the tensors
the caller holds (the asked tensor, the output, the ``names``), which equal what the graph's
nodes had saved from them.

:func:`live_singular` checks, on those values, where a node's derivative is infinite (``sqrt``
of an exact 0, a divisor of 0: :mod:`gradarg.trace.graph.singularpoints`) on the path to the
tensor, so that a NaN gradient found after ``backward()`` is still located when the value is in
hand.  Imports the graph helpers and :mod:`.context` only.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import torch

from ..graph.nodes import children, node_class, op_name
from ..graph.singularpoints import Singular, at_singular, checked_value
from .context import Context

__all__ = ["Found", "dead_relu", "describe", "live_singular"]

_SLOT = {"_saved_self": 0, "_saved_other": 1}
# operations whose node saves its output, an elementwise function of the one input
_FROM_INPUT = {"sqrt": torch.sqrt, "rsqrt": torch.rsqrt, "reciprocal": torch.reciprocal}


class Found(NamedTuple):
    """A node on the path whose derivative is infinite at the value a live tensor shows."""

    op: str
    node: str
    singular: Singular


def _held(c: Context) -> dict[tuple[int, int], tuple[str, torch.Tensor]]:
    """``(node key, output index)`` of every tensor the caller holds that is in the graph,
    with its name: a leaf is its accumulator's key and index 0."""
    held: dict[tuple[int, int], tuple[str, torch.Tensor]] = {}
    named = [(c.xname, c.tensor), (c.oname, c.output), *c.names.items()]
    for name, t in named:
        if not isinstance(t, torch.Tensor):
            continue
        key = c.graph.key_of(t)
        if key is not None:
            held.setdefault((key, 0 if t.grad_fn is None else t.output_nr), (name, t))
    return held


def live_singular(c: Context) -> Found | None:
    """The first node (output side first) on a path from the output to the tensor whose
    checked value (:func:`~gradarg.trace.graph.singularpoints.checked_value`) is a tensor the
    caller holds and sits at a point where the node's derivative is infinite."""
    held = _held(c)
    if not held:
        return None
    for k in sorted(c.path):
        node = c.nodes[k]
        attr = checked_value(node)
        if attr is None:
            continue
        recompute = None
        kids = children(node)
        if attr == "_saved_result":
            found = held.get((k, 0))
            if found is None and op_name(node) in _FROM_INPUT and kids and kids[0][0] is not None:
                # the output these save is a function of the input alone: recomputed from it
                found = held.get((c.graph.index[kids[0][0]], kids[0][1]))
                recompute = _FROM_INPUT[op_name(node)]
        else:
            slot = _SLOT.get(attr)
            if slot is None or slot >= len(kids) or kids[slot][0] is None:
                continue
            child, nr = kids[slot]
            found = held.get((c.graph.index[child], nr))
        if found is None:
            continue
        name, value = found
        value = value.detach()
        if recompute is not None:
            with torch.no_grad():
                value = recompute(value)
            how = f"{op_name(node)} recomputed from {name}, which the caller still holds"
        else:
            how = f"read from {name}, which the caller still holds"
        point = at_singular(node, value, how)
        if point is not None:
            return Found(op_name(node), node_class(node), point)
    return None


def describe(found: Any) -> str:
    """``found`` in words, for an answer."""
    return f"it starts at {found.op} ({found.node}): {found.singular.text}"


def dead_relu(c: Context) -> str | None:
    """A ReLU that every path from the output to the tensor passes through, whose input is a
    tensor the caller holds with no entry above 0: it sent only zeros (a dead ReLU), in words;
    ``None`` when the held values do not show one."""
    held = _held(c)
    for k in sorted(c.path):
        node = c.nodes[k]
        if op_name(node) != "relu" or not c.graph.cut_by(c.position, {k}):
            continue
        kids = children(node)
        into = (held.get((c.graph.index[kids[0][0]], kids[0][1]))
                if kids and kids[0][0] is not None else None)
        # its input ≤ 0 everywhere, or its output (which it saved) 0 everywhere
        for found, role in ((into, "input"), (held.get((k, 0)), "output")):
            if found is None:
                continue
            name, value = found
            dead = value.detach() > 0
            if value.numel() and not bool(dead.any()):
                said = "≤ 0" if role == "input" else "0"
                return (f"every path from {c.oname} to {c.xname} passes through relu "
                        f"({node_class(node)}), whose {role} {name} (which the caller still "
                        f"holds) is {said} at all {value.numel()} entries: a dead ReLU sends "
                        f"only zeros back (check the initialisation and the input scale, or "
                        f"use LeakyReLU)")
    return None
