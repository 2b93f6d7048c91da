"""The ``weight`` of ``nll_loss`` / ``cross_entropy`` read from the saved values of its
autograd node at the ``backward()`` call: one weight per class, read for sample ``i`` as
``weight[target[i]]``, the mean dividing by the sum of those weights (PyTorch's
``nn.CrossEntropyLoss`` docs).  Torch accepts a ``weight`` only of length ``C``, the number
of classes, so per-sample weights passed there run without an error only when the batch has
``C`` rows: then every sample is weighted by its label's entry, not its own.  What the saved
values show: a ``weight`` whose length is both the batch's and the classes' count, with
entries that differ (equal weights change nothing).

Imports :func:`gradarg.trace.graph.nodes.saved_value` only.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import torch

from ..graph.nodes import saved_value

__all__ = ["NLL", "BatchLong", "weight_as_long_as_batch"]

NLL = ("NllLossBackward0", "NllLoss2DBackward0")  # the nodes nll_loss records


class BatchLong(NamedTuple):
    """A class ``weight`` of ``length`` entries for a batch of ``length`` rows and as many
    classes: ``moved`` of the samples are weighted by another entry than their own row's
    (``weight[target[i]] != weight[i]``); ``absent``: classes with no sample in the batch."""

    length: int
    moved: int
    absent: int


def weight_as_long_as_batch(node: Any) -> BatchLong | None:
    """For an ``nll_loss`` node (``NllLossBackward0``: ``cross_entropy`` records
    ``log_softmax`` then ``nll_loss``) over an input of shape ``(N, C)`` with ``N == C`` and
    a ``weight`` of ``C`` entries, some sample's label entry differing from its row's own,
    :class:`BatchLong`; else ``None`` (no weight, another shape, equal weights, or a node
    whose values are not readable)."""
    if type(node).__name__ not in NLL:
        return None
    x, w, t = (saved_value(node, a, hooked=False)
               for a in ("_saved_self", "_saved_weight", "_saved_target"))
    if not (isinstance(x, torch.Tensor) and isinstance(w, torch.Tensor)
            and isinstance(t, torch.Tensor) and x.dim() == 2 and w.dim() == 1
            and x.shape[0] == x.shape[1] == w.numel() == t.numel() > 1):
        return None
    w, t = w.detach(), t.detach().long()
    ok = (t >= 0) & (t < w.numel())  # ignore_index rows are left out
    moved = int((w[t[ok]] != w[ok.nonzero().flatten()]).sum())
    absent = w.numel() - int(torch.unique(t[ok]).numel())
    return BatchLong(w.numel(), moved, absent) if moved else None
