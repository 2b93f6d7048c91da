"""A large ``label_smoothing`` in ``cross_entropy``, read from the saved factors of its autograd
nodes at the ``backward()`` call.  With class-index targets torch computes
``(1 - s) * nll_loss(log_softmax(x), y) + (s / C) * smooth`` (``smooth`` the mean of
``-log_softmax(x)`` summed over the ``C`` classes: ATen's ``cross_entropy`` with
``label_smoothing``), which trains towards the target ``1 - s + s / C`` on the true class and
``s / C`` on every other: ``s`` is the share of the label's mass taken from the true class and
spread evenly, not the mass the true class keeps (PyTorch's ``nn.CrossEntropyLoss`` docs,
after Szegedy et al., 2016, "Rethinking the Inception Architecture", section 7).  What the
graph shows: an ``AddBackward0`` of two ``MulBackward1`` whose first scales an
``nll_loss`` of a ``log_softmax`` by ``a`` and whose second's factor is ``(1 - a) / C``.

Imports :func:`gradarg.trace.graph.nodes.saved_value` only.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import torch

from ..graph.nodes import saved_value, through_reshapes

__all__ = ["HEAVY", "Smoothing", "heavy_smoothing"]

HEAVY = 0.5  # a label_smoothing at least this takes half the label's mass or more
_NLL = ("NllLossBackward0", "NllLoss2DBackward0")


class Smoothing(NamedTuple):
    """``s`` the ``label_smoothing``; ``classes`` ``C``; ``true`` the target on the true class
    (``1 - s + s / C``); ``other`` the target on each other class (``s / C``)."""

    s: float
    classes: int
    true: float
    other: float


def _factor(node: Any) -> float | None:
    if type(node).__name__ != "MulBackward1" or len(node.next_functions) != 1:
        return None
    f = saved_value(node, "_saved_other", hooked=False)
    return float(f) if isinstance(f, (int, float)) and not isinstance(f, bool) else None


def heavy_smoothing(node: Any) -> Smoothing | None:
    """For ``cross_entropy``'s final ``AddBackward0`` (class-index targets, any reduction or
    class weight) with ``label_smoothing`` at least :data:`HEAVY`, :class:`Smoothing`; else
    ``None`` (another node, a smaller smoothing, factors that do not fit ``(1 - s)`` and
    ``s / C`` for the classes of the ``log_softmax`` under the ``nll_loss``)."""
    if type(node).__name__ != "AddBackward0" or len(node.next_functions) != 2:
        return None
    (m1, _), (m2, _) = node.next_functions
    a, b = _factor(m1), _factor(m2)
    if a is None or b is None:
        return None
    nll = m1.next_functions[0][0]
    if type(nll).__name__ not in _NLL:
        return None
    # nll_loss over (N, C, d...) views its input first
    soft = through_reshapes(next((c for c, _ in nll.next_functions if c is not None), None))
    if type(soft).__name__ != "LogSoftmaxBackward0":
        return None
    out = saved_value(soft, "_saved_result", hooked=False)
    dim = saved_value(soft, "_saved_dim", hooked=False)
    if not (isinstance(out, torch.Tensor) and isinstance(dim, int) and out.dim() >= 1):
        return None
    classes, s = int(out.shape[dim]), 1.0 - a
    if classes < 2 or not HEAVY <= s <= 1 or abs(b - s / classes) > 1e-6 * max(1.0, b):
        return None
    return Smoothing(s, classes, 1 - s + s / classes, s / classes)
