"""What is still readable once ``backward()`` freed the saved tensors: the values of the tensors
the caller holds (the asked tensor, the output, the ``names``), which equal what the graph's
nodes had saved from them.

:func:`live_singular` checks, on those values, where a node's derivative is infinite (``sqrt``
of an exact 0, a divisor of 0: :mod:`gradarg.trace.graph.singularpoints`) on the path to the
tensor, so that a NaN gradient found after ``backward()`` is still located when the value is in
hand; :func:`dead_relu` and :func:`held_zero_factor` place an exactly zero gradient the same
way (a ReLU whose held input is ≤ 0, a product whose held operand is all zeros).  Imports the
graph helpers, :mod:`.context` and :func:`.gradients.all_zero` only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any, NamedTuple

import torch

from ..graph.nodes import children, node_class, op_name
from ..graph.operators import factors, row
from ..graph.singularpoints import Singular, at_singular, checked_value
from .context import Context
from .gradients import all_zero

__all__ = ["Found", "dead_relu", "describe", "held_zero_factor", "live_singular"]

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


def held_zero_factor(c: Context) -> str | None:
    """Products that together lie on every path from the output to the tensor (the edges
    into them cut every path) whose other operand is all zeros, as tensors the caller holds
    show, in words:

    * the operand is in the graph and the caller holds it (the same node): it is that tensor;
    * the operand has no history (data, a constant) and a tensor the caller passed in
      ``names`` without history is all zeros, with the shape the node kept of that operand
      (``_saved_<operand>_sym_sizes`` outlives ``backward()``): said as *if it is that
      operand*, since after ``backward()`` the graph no longer holds its values.

    ``None`` when the held values show no such products."""
    held = _held(c)
    constants = [(name, t) for name, t in c.names.items()
                 if isinstance(t, torch.Tensor) and t.grad_fn is None and not t.requires_grad
                 and (t.is_floating_point() or t.is_complex()) and all_zero(t)]
    if not held and not constants:
        return None
    graph = c.graph
    zeros: dict[tuple[int, int], tuple[str, bool]] = {}  # (node, input) -> (its zero operand
    # in words, whether the held tensor is that operand, not only of its shape)
    for k in sorted(c.path):
        node = c.nodes[k]
        op = op_name(node)
        operands = row(op).operands
        if not operands:
            continue
        kids = children(node)
        for slot, (child, _) in enumerate(kids):
            if child is None or graph.index[child] not in c.path:
                continue
            for j in factors(op, slot):
                said = _zero_operand(c, held, constants, node, kids, j, operands[j])
                if said is not None:
                    zeros[(k, slot)] = said
                    break
    if not zeros or c.position in graph.reachable(set(zeros)):
        return None  # a path around them reaches the tensor
    if len(zeros) > 1 and not all(sure for _, sure in zeros.values()):
        return None  # a shape alone cannot say that one held tensor is each product's operand
    kinds = Counter((op_name(c.nodes[k]), node_class(c.nodes[k])) for k in {k for k, _ in zeros})
    nodes = " and ".join(f"{op} ({cls})" if n == 1 else f"{n} {op} nodes ({cls})"
                         for (op, cls), n in kinds.items())
    what = list(dict.fromkeys(said for said, _ in zeros.values()))
    one = len(zeros) == 1
    return (f"every path from {c.oname} to {c.xname} passes through {nodes}, "
            f"{'which multiplies' if one else 'each multiplying'} the cotangent by "
            f"{'; and by '.join(what)}")


def _zero_operand(c: Context, held: dict[tuple[int, int], tuple[str, torch.Tensor]],
                  constants: list[tuple[str, torch.Tensor]], node: Any,
                  kids: Sequence[Any], j: int, attr: str) -> tuple[str, bool] | None:
    """Operand ``j`` of the product ``node`` in words when a held tensor shows it all zeros,
    and whether that tensor is the operand (``False``: it has the operand's shape)."""
    child, nr = kids[j] if j < len(kids) else (None, 0)
    in_graph, found = child is not None, None
    while child is not None and child in c.graph.index:
        found = held.get((c.graph.index[child], nr))
        below = children(child)
        if found is not None or not row(op_name(child)).keeps_zero or not below:
            break  # a view or copy of a held tensor is zero where it is: look through it
        child, nr = below[0]
    if in_graph:
        if found is None or not all_zero(found[1]):
            return None
        name, value = found
        text = (f"{name} (which the caller still holds), all zeros at its {value.numel()} "
                f"entries: the product sends only zeros back, so {c.xname} gets an exactly "
                f"zero gradient while {name} is zero")
        return text, True
    sizes = getattr(node, f"{attr}_sym_sizes", None) if attr else None
    if sizes is None:
        return None  # the operand's shape went with the graph: nothing ties a held tensor to it
    shape = tuple(int(n) for n in sizes)
    same = [name for name, t in constants if tuple(t.shape) == shape]
    if len(same) != 1:
        return None
    name = same[0]
    text = (f"an operand without history of shape {shape} (data, a mask or a constant); "
            f"{name}, which you passed, has that shape, no history and is all zeros: if it is "
            f"that operand (backward() freed the values the node saved, so this cannot be "
            f"compared), the product sends only zeros back and {c.xname}'s gradient is exactly "
            f"zero whatever the loss (an all-zero input or padding gives a weight no gradient)")
    return text, False
