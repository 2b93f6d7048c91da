"""A squared error on sigmoid outputs that are saturated on the wrong side, read from the saved
values of the loss's first autograd nodes at the ``backward()`` call.

The squared loss ``(y - p) ** 2`` with ``p = sigmoid(z)`` has the gradient ``-2 (y - p) p (1 - p)``
in the logit ``z``: where ``p`` is near 0 or 1 the sigmoid's derivative ``p (1 - p)`` makes it
vanish, even for a prediction that is wrong, while the logistic loss (binary cross-entropy on
the logits) has the gradient ``p - y``, never flat (Bishop, Pattern Recognition and Machine
Learning, section 4.3.2; Golik et al., 2013, "Cross-entropy vs. squared error training").
What the graph shows: ``mse_loss`` of a sigmoid's output (its saved input and target), or a
power of 2 of a subtraction one side of which is a sigmoid's output (the saved difference).

Imports :func:`gradarg.trace.graph.nodes.saved_value` only.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import torch

from ..graph.nodes import saved_value, through_reshapes

__all__ = ["FLAT", "SHARE", "SQUARES", "SaturatedSquare", "saturated_square"]

SQUARES = ("MseLossBackward0", "PowBackward0")  # the nodes read
FLAT = 0.01  # p (1 - p) below this: |logit| above about 4.6
SHARE = 0.25  # named when at least this share of the predictions is flat and wrong


class SaturatedSquare(NamedTuple):
    """``wrong`` of the ``total`` predictions are flat (``p (1 - p) <`` :data:`FLAT`) with an
    error above 0.5; ``slope``: the largest ``p (1 - p)`` among them."""

    wrong: int
    total: int
    slope: float


def _sigmoid_below(node: Any) -> torch.Tensor | None:
    """The saved output of the ``SigmoidBackward0`` that ``node`` is, or that its one live
    edge reaches through views; ``None``: none."""
    node = through_reshapes(node)
    if type(node).__name__ != "SigmoidBackward0":
        return None
    p = saved_value(node, "_saved_result", hooked=False)
    return p.detach() if isinstance(p, torch.Tensor) and p.is_floating_point() else None


def saturated_square(node: Any) -> SaturatedSquare | None:
    """For ``mse_loss(sigmoid(z), y)`` or ``(y - sigmoid(z)) ** 2`` (either sign) with at least
    :data:`SHARE` of the predictions flat and wrong, :class:`SaturatedSquare`; else ``None``."""
    name = type(node).__name__
    if name == "MseLossBackward0":
        p = _sigmoid_below(node.next_functions[0][0]) if node.next_functions else None
        t = saved_value(node, "_saved_target", hooked=False)
        if p is None or not isinstance(t, torch.Tensor) or t.shape != p.shape:
            return None
        error = (p - t.detach()).abs()
    elif name == "PowBackward0" and saved_value(node, "_saved_exponent", hooked=False) == 2:
        sub: Any = node.next_functions[0][0] if node.next_functions else None
        e = saved_value(node, "_saved_self", hooked=False)
        if type(sub).__name__ != "SubBackward0" or not isinstance(e, torch.Tensor):
            return None
        live = [c for c, _ in sub.next_functions if c is not None]
        p = _sigmoid_below(live[0]) if len(live) == 1 else None
        if p is None or p.numel() != e.numel():
            return None
        p, error = p.reshape(e.shape), e.detach().abs()
    else:
        return None
    slope = p * (1 - p)
    flat = (slope < FLAT) & (error > 0.5)
    wrong = int(flat.sum())
    if p.numel() == 0 or wrong < SHARE * p.numel():
        return None
    return SaturatedSquare(wrong, p.numel(), float(slope[flat].max()))
