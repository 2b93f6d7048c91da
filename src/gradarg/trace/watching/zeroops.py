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

A product among them with a factor that is a number exactly 0 without history (a blend weight
that came out as 0) is named, from the value it saved, read at the ``backward()`` call
(:func:`zero_factors`).

Imports :mod:`.operations` and ``trace.graph``'s ``nodes.saved_value`` and ``values`` only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import torch

from ..graph.nodes import saved_value
from ..graph.values import state
from .operations import call_operations
from .operations import describe as _describe

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = ["FLAT", "LOSS", "ZERO_FACTOR_STARTS", "ZeroMade", "find", "zero_factor", "zero_factors"]

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
        nodes: list[Any] = []
        try:
            ops = call_operations(w.calls, outer.index, c.index, 6, between=True,
                                  visited=nodes)
        except Exception:  # noqa: BLE001 (a graph that cannot be walked: nothing said)
            return None
        made = zero_factor(nodes, w.grads.losses.zero_factors)
        return ZeroMade(outer.name, c.name, ops, made) if ops else None
    tops = [c for c in reached if c.parent is None]
    if not tops or any(state(c.grad_out) != "zero" for c in tops):
        return None
    return ZeroMade(LOSS, "(model)", w.graph.loss_operations, w.grads.losses.zero_why)



# the node classes its scan starts from: with none of them in the nodes given, it finds nothing
ZERO_FACTOR_STARTS = frozenset({"MulBackward0"})


def zero_factors(walked: list[Any]) -> tuple[Any, ...]:
    """The products among ``walked`` (a loss's first nodes, read at the ``backward()`` call,
    before the backward frees what they saved) with a factor that is a number exactly 0
    without autograd history (a blend weight that came out as 0): every gradient through
    them is exactly zero."""
    found = []
    for n in walked:
        if type(n).__name__ == "MulBackward0":
            for attr in ("_saved_other", "_saved_self"):
                f = saved_value(n, attr, hooked=False)
                if (isinstance(f, torch.Tensor) and f.dim() == 0 and not f.requires_grad
                        and f.item() == 0):
                    found.append(n)
                    break
    return tuple(found)


def zero_factor(nodes: list[Any], factors: tuple[Any, ...]) -> str:
    """What the first of ``nodes`` that is one of ``factors`` (:func:`zero_factors`) does, in
    words; ``""``: none is."""
    if not any(n in factors for n in nodes):
        return ""
    return ("MulBackward0 multiplied by a factor that is exactly 0 (a number without autograd "
            "history, observed: the factor it saved at the backward() call), so every "
            "gradient through it is exactly zero: a mask, weight or coefficient that came out "
            "as 0, for example a drop path or dropout that dropped the whole sample (residual "
            "branch and identity together), an integer division (step // n is 0 until step "
            "reaches n) or a schedule that starts at 0")


def describe(ops: list[str]) -> str:
    """Node names, those with a flat range first, each with what it does there."""
    return _describe(ops, FLAT, 3)
