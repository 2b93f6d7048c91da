"""A contrastive loss whose logits keep each example's similarity with itself.

NT-Xent / InfoNCE (SimCLR: Chen et al., 2020, https://arxiv.org/abs/2002.05709) computes
``cross_entropy`` over the ``2N x 2N`` matrix of similarities between the embeddings of two
views, the positive of row ``i`` being the other view of the same example.  The diagonal, each
embedding with itself (cosine 1, the largest possible), must be masked out: left in, it takes
the largest share of every row's softmax, so every row's loss stays above ``log 2`` and the
gradient pushes against an entry that carries no information.

Seen here, at each outermost ``backward()``: an ``nll_loss`` node among the loss's first nodes
whose input is ``log_softmax`` of a square matrix (``_saved_result``, :data:`MIN_ROWS` rows at
least) whose largest entry is on the diagonal in every row, while no row's target is its own
index (``_saved_target``): a masked diagonal (``-inf`` or a large negative) is never the row's
largest entry.

Read by :class:`.lossnodes.LossNodes` (:data:`NODE`, :func:`read`). Imports :mod:`.finding`
and ``trace.graph`` only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import torch

from ..graph.nodes import saved_value
from .finding import Finding, Options

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = ["MIN_ROWS", "NODE", "SelfMatch", "read", "self_match"]

NODE = "NllLossBackward0"
"""The loss node read (its saved values)."""

MIN_ROWS = 8
"""Rows needed before the diagonal is judged (fewer: a largest diagonal can be chance)."""


class SelfMatch(NamedTuple):
    """The ``rows`` x ``rows`` logits of a ``cross_entropy`` whose diagonal is every row's
    largest entry, no row's target being its own index."""

    rows: int


def read(node: Any) -> SelfMatch | None:
    target = saved_value(node, "_saved_target", hooked=False)
    below = node.next_functions[0][0] if node.next_functions else None
    if below is None or type(below).__name__ != "LogSoftmaxBackward0":
        return None
    out = saved_value(below, "_saved_result", hooked=False)
    if not (isinstance(out, torch.Tensor) and isinstance(target, torch.Tensor)
            and out.dim() == 2 and out.shape[0] == out.shape[1] >= MIN_ROWS
            and target.shape == out.shape[:1] and out.is_floating_point()):
        return None
    own = torch.arange(out.shape[0], device=out.device)
    if bool((out.argmax(1) == own).all()) and not bool((target == own).any()):
        return SelfMatch(out.shape[0])
    return None


def self_match(w: GradWatch, o: Options) -> Finding:
    """A contrastive loss whose logits keep each example's similarity with itself."""
    m = w.lossnodes.found.get("selfmatch")
    if m is None:
        return Finding("self-similarity", True)
    return Finding("self-similarity", True, (
        f"cross_entropy over a square {m.rows}x{m.rows} matrix of logits whose largest entry in "
        f"every row is on its diagonal, which is never the row's target (read from the graph "
        f"at the backward call): each example's similarity with itself is left in the softmax "
        f"of a contrastive loss (NT-Xent / InfoNCE), taking the largest share of every row; "
        f"mask the diagonal out before cross_entropy (masked_fill of torch.eye({m.rows}, "
        f"dtype=torch.bool) with the dtype's lowest value, or drop it from each row)"))
