"""The autograd operations of a module call, or between the model's output and the loss, read
from the graph by name, and what those with a singular point are known to do there.

Read only when a non-finite gradient needs its cause named (at the end of the block, while
the graph is held): no per-operation work during the step.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..graph.nodes import children

__all__ = ["SINGULAR", "call_operations", "describe", "operations_between"]

_REACH_LIMIT = 20000  # nodes visited at most

# operations that make NaN/Inf at finite inputs, in the forward or in their derivative
SINGULAR = {
    "SqrtBackward0": "NaN below 0, derivative infinite at 0",
    "RsqrtBackward0": "NaN below 0, infinite at 0",
    "LogBackward0": "NaN below 0, -inf at 0 where its derivative is infinite",
    "Log2Backward0": "NaN below 0, -inf at 0 where its derivative is infinite",
    "Log10Backward0": "NaN below 0, -inf at 0 where its derivative is infinite",
    "PowBackward0": "NaN for a negative base and a fractional exponent, derivative infinite "
                    "at 0 for an exponent below 1",
    "PowBackward1": "NaN for a negative base and a fractional exponent",
    "DivBackward0": "infinite where the divisor is 0",
    "ReciprocalBackward0": "infinite at 0",
    "AcosBackward0": "NaN beyond ±1, derivative infinite at ±1",
    "AsinBackward0": "NaN beyond ±1, derivative infinite at ±1",
    "AtanhBackward0": "infinite at ±1, NaN beyond",
    "Atan2Backward0": "derivative x/(x²+y²), y/(x²+y²): infinite at (0, 0), overflowing "
                      "for tiny x and y",
    "NormBackward1": "derivative undefined at 0 (x / ‖x‖)",
    "LinalgVectorNormBackward0": "derivative undefined at 0 (x / ‖x‖)",
}


def operations_between(start: Sequence[Any], stop: set[Any], limit: int = 12,
                       visited: list[Any] | None = None) -> list[str]:
    """The names of the autograd nodes reached from ``start`` without passing through a node
    of ``stop`` (breadth first, each name once, ``AccumulateGrad`` left out, at most
    ``limit``): the operations of a module call (from its outputs to its inputs), or of the
    loss (from the loss to the model's outputs); ``visited`` (a list) gets the nodes read."""
    names: list[str] = []
    todo = [n for n in dict.fromkeys(start) if n is not None and n not in stop]
    seen = set(todo)
    while todo and len(seen) < _REACH_LIMIT and len(names) < limit:
        n = todo.pop(0)
        name = type(n).__name__
        if visited is not None:
            visited.append(n)
        if name != "AccumulateGrad" and name not in names:
            names.append(name)
        for c, _ in children(n):
            if c is not None and c not in seen and c not in stop:
                seen.add(c)
                todo.append(c)
    return names


def call_operations(rec: Any, index: int, inner: int | None = None,
                    limit: int = 12, between: bool = False,
                    visited: list[Any] | None = None) -> list[str]:
    """The operations of call ``index`` of ``rec`` (a :class:`~.recorder.Recorder`) itself:
    the nodes between its outputs and its inputs, not past the outputs of the calls made
    inside it (theirs), nor past those of ``inner`` (a call inside it) (read while the graph
    is held).  ``between``: also from the inputs of the calls made inside it other than
    ``inner`` (the operations between two of them: ``fc2(round(fc1(x)))``'s ``round``);
    ``visited`` as for :func:`operations_between`."""
    by_slot = {slot: key[0] for key, slot in rec.slots.items() if key[1] >= 0}
    r = rec.raw[index]
    outs = [by_slot[s] for s in r.outs or [] if s in by_slot]
    if between:
        outs += [by_slot[s] for k, q in enumerate(rec.raw) if q.parent == index and k != inner
                 for s in q.ins if s in by_slot]
    inside = [q for k, q in enumerate(rec.raw) if q.parent == index or k == inner]
    ends = [*r.ins, *(s for q in inside for s in q.outs or [])]
    return operations_between(outs, {by_slot[s] for s in ends if s in by_slot}, limit, visited)


def describe(ops: list[str], known: dict[str, str] = SINGULAR, k: int = 4) -> str:
    """Node names, those of ``known`` first (by default those with a singular point), each
    with what ``known`` says it does there; at most ``k``."""
    ranked = sorted(ops, key=lambda n: n not in known)
    shown = [f"{n} ({known[n]})" if n in known else n for n in ranked[:k]]
    return ", ".join(shown) + (", ..." if len(ops) > k else "")
