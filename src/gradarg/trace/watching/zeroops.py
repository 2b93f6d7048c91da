"""Where an all-zero gradient was made outside every module: the operations of a module's own
``forward`` between a call whose output got a nonzero gradient and the call inside it whose
output got an all-zero one (a ``clamp`` of the output, a ``relu`` written as a function),
read from the graph when the block ends, while it is still held; or made after the model, by
the loss: the model's outputs got an all-zero gradient (``outer`` is :data:`LOSS`), with the
operations between them and the loss and, where a node's saved values showed it at the
``backward()`` call, why (:func:`gradarg.trace.watching.observed.zero_why`).

Both gradients are observed (the norms the module hooks recorded); the operations between the
two outputs are the nodes reached from the outer call's outputs, and from the inputs of the
other calls inside it (``fc2(round(fc1(x)))``), without passing the inner call's output
(:func:`gradarg.trace.watching.operations.call_operations`), so the zero was made by one of
them.  Those known to have a zero derivative over a range, or to route the gradient to some
entries only (a selection of a concatenation), or to be zero where a factor is (a mask), are
described (:data:`FLAT`).

Imports :mod:`.operations` and ``trace.graph.values`` only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from ..graph.values import state
from .operations import call_operations
from .operations import describe as _describe

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = ["FLAT", "LOSS", "ZeroMade", "find"]

LOSS = "(loss)"
""":attr:`ZeroMade.outer` when the zero was made after the model, by the loss."""

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
    "MulBackward0": "mul: zero gradient where the other factor is zero (a mask: a drop path "
                    "or dropout that dropped the whole sample, residual branch and identity)",
    "SoftmaxBackward0": "softmax: zero gradient when taken over a dimension of size 1 (every "
                        "output is 1) or saturated to one-hot",
    "LogSoftmaxBackward0": "log_softmax: zero gradient when taken over a dimension of size 1 "
                           "(every output is 0)",
    # routing, not flat: they send each entry's gradient to one place, nothing to the rest
    "SelectBackward0": "select, x[:, i]: zero gradient to every entry not selected",
    "SliceBackward0": "slice, x[:, a:b]: zero gradient to every entry outside the slice",
    "CatBackward0": "torch.cat: each input gets only the part of the gradient at its own "
                    "positions (a selection of another input's positions sends it nothing)",
}


class ZeroMade(NamedTuple):
    """The gradient was nonzero at the output of call ``outer`` (a module's name) and all
    zero at the output of ``inner``, a call inside it; ``ops``: the operations of ``outer``'s
    own forward between the two outputs (autograd node names).  ``outer`` :data:`LOSS`: the
    model's outputs got an all-zero gradient; ``ops`` are then the operations between them and
    the loss, and ``why`` what a node's saved values show (``""``: nothing)."""

    outer: str
    inner: str
    ops: list[str]
    why: str = ""


def find(w: GradWatch) -> ZeroMade | None:
    """The call reached first by the backward pass whose output got an all-zero gradient
    while the call it ran inside got a nonzero one at its output, with the operations between
    them; ``None`` when there is none or the graph cannot be read (call while the graph is
    held)."""
    calls = w.modules
    reached = [c for c in calls if c.backward_rank is not None]
    for c in sorted(reached, key=lambda c: c.backward_rank or 0):
        if c.parent is None or state(c.grad_out) != "zero":
            continue
        outer = calls[c.parent]
        if state(outer.grad_out) != "ok":
            continue
        try:
            ops = call_operations(w.calls, outer.index, c.index, 6, between=True)
        except Exception:  # noqa: BLE001 (a graph that cannot be walked: nothing said)
            return None
        return ZeroMade(outer.name, c.name, ops) if ops else None
    tops = [c for c in reached if c.parent is None]
    if not tops or any(state(c.grad_out) != "zero" for c in tops):
        return None
    return ZeroMade(LOSS, "(model)", w.graph.loss_operations, w.grads.losses.zero_why)



def describe(ops: list[str]) -> str:
    """Node names, those with a flat range first, each with what it does there."""
    return _describe(ops, FLAT, 3)
