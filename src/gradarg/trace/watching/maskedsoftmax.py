"""A softmax whose scores were multiplied by a 0/1 mask instead of set to ``-inf`` where
masked: a masked score becomes 0, and ``exp(0)`` still gives it weight, so attention leaks to
the positions the mask meant to hide (non-edges of a graph, padding, future tokens).  Read
from the loss's first nodes at the ``backward()`` call, before the backward frees what they
saved: a ``SoftmaxBackward0`` whose input is a ``MulBackward0`` with a factor without autograd
history whose entries are all 0 or 1, some 0, and the softmax's own output (the weight the
masked positions got).

Imports ``trace.graph.nodes``' ``saved_value`` and :mod:`.slip` only.
"""

from __future__ import annotations

from typing import Any

import torch

from ..graph.nodes import saved_value
from .slip import Slip

__all__ = ["STARTS", "masked_softmax"]

_MOST = 1 << 22  # entries of a mask read at most


# the node classes its scan starts from: with none of them in the nodes given, it finds nothing
STARTS = frozenset({"SoftmaxBackward0"})


def masked_softmax(walked: list[Any]) -> Slip | None:
    """The first softmax of ``walked`` (a loss's first autograd nodes) whose input was
    multiplied by a 0/1 mask that hides some positions while the softmax gave them weight, as
    a :class:`~.slip.Slip` ``"masked-softmax"``; ``None``: none."""
    for n in walked:
        if type(n).__name__ != "SoftmaxBackward0":
            continue
        out, dim = (saved_value(n, a, hooked=False) for a in ("_saved_result", "_saved_dim"))
        if not isinstance(out, torch.Tensor) or not isinstance(dim, int) or out.dim() == 0:
            continue
        for child, _ in n.next_functions:
            if child is None or type(child).__name__ != "MulBackward0":
                continue
            for attr in ("_saved_other", "_saved_self"):
                found = _read(saved_value(child, attr, hooked=False), out.detach(), dim)
                if found is not None:
                    return found
    return None


def _read(mask: Any, out: torch.Tensor, dim: int) -> Slip | None:
    """``mask`` as a ``"masked-softmax"`` slip of ``out`` when it is a 0/1 tensor without
    history, broadcastable to ``out``, with some 0 where ``out`` gave weight: ``other`` the
    masked entries (broadcast to the scores), all entries and the softmax's dimension,
    ``value`` the mean over the rows of the weight given to masked positions."""
    if (not isinstance(mask, torch.Tensor) or mask.requires_grad or mask.dim() == 0
            or mask.is_complex() or out.numel() > _MOST):
        return None
    try:
        hidden = (mask == 0).expand_as(out)
    except RuntimeError:
        return None
    if not bool(((mask == 0) | (mask == 1)).all()) or not bool(hidden.any()):
        return None
    weight = (out.float() * hidden).sum(dim).mean().item()
    if weight <= 0:
        return None
    return Slip("masked-softmax", "SoftmaxBackward0", tuple(out.shape),
                (int(hidden.sum()), out.numel(), dim % out.dim()), value=weight)
