"""Where an all-zero gradient was made outside every module: the operations of a module's own
``forward`` between a call whose output got a nonzero gradient and the call inside it whose
output got an all-zero one (a ``clamp`` of the output, a ``relu`` written as a function),
read from the graph when the block ends, while it is still held.

Both gradients are observed (the norms the module hooks recorded); the operations between the
two outputs are the nodes reached from the outer call's outputs without passing the inner
call's (:func:`gradarg.trace.watching.operations.operations_between`), so the zero was made by
one of them.  Those known to have a zero derivative over a range are described (:data:`FLAT`).

Imports :mod:`.operations` only.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, NamedTuple

from .operations import operations_between

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = ["FLAT", "ZeroMade", "find"]

FLAT = {
    "ClampBackward1": "clamp: zero derivative where the input is outside [min, max]",
    "ClampMinBackward0": "clamp(min=): zero derivative below min",
    "ClampMaxBackward0": "clamp(max=): zero derivative above max",
    "HardtanhBackward0": "hardtanh: zero derivative outside [min_val, max_val]",
    "ReluBackward0": "relu: zero derivative below 0",
    "ThresholdBackward0": "threshold / relu: zero derivative below the threshold",
    "SignBackward0": "sign: zero derivative everywhere",
    "RoundBackward0": "round: zero derivative everywhere",
    "FloorBackward0": "floor: zero derivative everywhere",
    "CeilBackward0": "ceil: zero derivative everywhere",
}


class ZeroMade(NamedTuple):
    """The gradient was nonzero at the output of call ``outer`` (a module's name) and all
    zero at the output of ``inner``, a call inside it; ``ops``: the operations of ``outer``'s
    own forward between the two outputs (autograd node names)."""

    outer: str
    inner: str
    ops: list[str]


def _zero(norm: float | None) -> bool:
    return norm is not None and norm == 0.0


def _nonzero(norm: float | None) -> bool:
    return norm is not None and math.isfinite(norm) and norm > 0.0


def find(w: GradWatch) -> ZeroMade | None:
    """The call reached first by the backward pass whose output got an all-zero gradient
    while the call it ran inside got a nonzero one at its output, with the operations between
    them; ``None`` when there is none or the graph cannot be read (call while the graph is
    held)."""
    calls = w.modules
    reached = [c for c in calls if c.backward_rank is not None]
    for c in sorted(reached, key=lambda c: c.backward_rank or 0):
        if c.parent is None or not _zero(c.grad_out):
            continue
        outer = calls[c.parent]
        if not _nonzero(outer.grad_out):
            continue
        try:
            ops = _between(w.calls, outer.index, c.index)
        except Exception:  # noqa: BLE001 (a graph that cannot be walked: nothing said)
            return None
        return ZeroMade(outer.name, c.name, ops) if ops else None
    return None


def _between(rec: Any, outer: int, inner: int) -> list[str]:
    """The nodes reached from call ``outer``'s outputs without passing call ``inner``'s
    outputs or ``outer``'s inputs (``rec``: the recorder, its slots and raw calls)."""
    by_slot = {slot: key[0] for key, slot in rec.slots.items() if key[1] >= 0}
    o, i = rec.raw[outer], rec.raw[inner]
    outs = [by_slot[s] for s in o.outs or [] if s in by_slot]
    stop = {by_slot[s] for s in [*(i.outs or []), *o.ins] if s in by_slot}
    return operations_between(outs, stop, 6)


def describe(ops: list[str]) -> str:
    """Node names, those with a flat range first, each with what it does there."""
    ranked = sorted(ops, key=lambda n: n not in FLAT)
    shown = [f"{n} ({FLAT[n]})" if n in FLAT else n for n in ranked[:3]]
    return ", ".join(shown) + (", ..." if len(ops) > 3 else "")
