"""A term of the loss that subtracts a tensor from itself, or divides it by itself: both
operands of a ``SubBackward0`` (with ``alpha`` 1) or a ``DivBackward0`` are one autograd node
(the same tensor), read from the loss's graph at the ``backward()`` call.  The difference is 0
(the ratio 1) whatever the values, so the term sends no gradient back: an anchor, a target or
a reference kept as the tensor itself rather than a copy of its value (an EWC anchor
``{n: p for n, p in model.named_parameters()}``).  ``x - x.detach()`` is not one: its second
operand has no node.

Imports ``trace.graph.nodes``' ``saved_value`` and :mod:`.slip` only.
"""

from __future__ import annotations

from typing import Any

from ..graph.nodes import saved_value
from .slip import Slip

__all__ = ["STARTS", "said", "self_differences"]

_OPS = {"SubBackward0": "subtracts a tensor from itself",
        "DivBackward0": "divides a tensor by itself"}


# the node classes its scan starts from: with none of them in the nodes given, it finds nothing
STARTS = frozenset(_OPS)


def self_differences(walked: list[Any]) -> list[Slip]:
    """A :class:`~.slip.Slip` ``"self-difference"`` for each node of ``walked`` (a loss's first
    nodes) whose two operands are one node: ``op`` its name, ``shape`` the operand's when it is
    a leaf (``()``: not known), ``other`` the ``id`` of that leaf (a parameter), empty for an
    intermediate tensor."""
    found: list[Slip] = []
    for n in walked:
        name = type(n).__name__
        if name not in _OPS or len(n.next_functions) != 2:
            continue
        (a, i), (b, j) = n.next_functions
        if a is None or a is not b or i != j:
            continue
        if name == "SubBackward0" and saved_value(n, "_saved_alpha", hooked=False) not in (1, None):
            continue
        leaf = getattr(a, "variable", None)
        if leaf is None:
            found.append(Slip("self-difference", name, ()))
        else:
            found.append(Slip("self-difference", name, tuple(int(d) for d in leaf.shape),
                              (id(leaf),)))
    return found


def said(op: str) -> str:
    """What ``op`` (``"SubBackward0"`` or ``"DivBackward0"``) does to one tensor, in words."""
    return _OPS.get(op, _OPS["SubBackward0"])
