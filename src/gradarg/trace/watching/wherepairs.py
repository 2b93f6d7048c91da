"""A loss made of two ``where`` selections added, each with one branch a constant,
``where(target == 1, a, 0) + where(target == -1, b, 0)`` (the form
``F.cosine_embedding_loss`` records), read from the saved conditions of its first autograd
nodes at the ``backward()`` call.  An entry whose conditions send it to the constant in both
selections has a constant loss and exactly zero gradient, whatever the model outputs: with
``nn.CosineEmbeddingLoss`` given labels 0 and 1 instead of -1 and 1, every pair labelled 0.

Imports :func:`gradarg.trace.graph.nodes.saved_value` only.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import torch

from ..graph.nodes import saved_value

__all__ = ["Constant", "constant_in_both"]


class Constant(NamedTuple):
    """``constant`` of the ``entries`` of the sum took a constant in both selections;
    ``cosine``: the live branches are those of ``F.cosine_embedding_loss`` (``1 - cos``, then
    ``clamp(cos - margin, min=0)``)."""

    constant: int
    entries: int
    cosine: bool
    shape: tuple[int, ...]


def _constant_entries(node: Any) -> tuple[torch.Tensor, str] | None:
    """The entries where a ``WhereBackward0`` with one live branch took its constant one,
    and the live branch's node name; ``None`` for another node or one not readable."""
    if type(node).__name__ != "WhereBackward0":
        return None
    edges = [c for c, _ in node.next_functions]
    live = [i for i, c in enumerate(edges) if c is not None]
    cond = saved_value(node, "_saved_condition", hooked=False)
    if len(edges) != 2 or len(live) != 1 or not isinstance(cond, torch.Tensor):
        return None
    cond = cond.detach().bool()
    # the first edge is the value where the condition holds, the second where it does not
    return (~cond if live[0] == 0 else cond), type(edges[live[0]]).__name__


def constant_in_both(node: Any) -> Constant | None:
    """For an ``AddBackward0`` over two ``where`` selections, each with one constant
    branch, the entries that took the constant in both (:class:`Constant`); ``None`` when
    ``node`` is not of that form or every entry takes a live branch somewhere."""
    if type(node).__name__ != "AddBackward0" or len(node.next_functions) != 2:
        return None
    p, q = (_constant_entries(c) for c, _ in node.next_functions)
    if p is None or q is None:
        return None
    (a, first), (b, second) = p, q
    try:
        both = a & b
    except RuntimeError:  # shapes that do not broadcast
        return None
    k = int(both.sum())
    if not k:
        return None
    cosine = first in ("SubBackward0", "RsubBackward1") and second == "ClampMinBackward0"
    return Constant(k, both.numel(), cosine, tuple(both.shape))
