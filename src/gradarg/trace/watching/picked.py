"""A minimum or maximum over a dimension that picks only some of the entries along it: only the
picked entries get gradient from that term (``min``'s derivative is 1 at the arg-min and 0
elsewhere), so whatever computed the others is not trained by it.  A one-sided Chamfer distance
(each target's nearest prediction: predictions nobody picks never move), a winner-take-all or
hard-example term.  Read from the loss's first nodes at the ``backward()`` call, before the
backward frees what they saved: a ``MinBackward0`` / ``MaxBackward0`` (``torch.min`` /
``torch.max`` with ``dim``) and the indices it saved.

This is an observation, not a fault by itself (max-pooling picks some positions on purpose):
it is said only beside parameters whose gradient has rows that are exactly zero.

Imports ``trace.graph.nodes``' ``saved_value`` and :mod:`.slip` only.
"""

from __future__ import annotations

from typing import Any

import torch

from ..graph.nodes import saved_value
from .slip import Slip

__all__ = ["STARTS", "picked_subset"]

_OPS = ("MinBackward0", "MaxBackward0")
_MOST = 1 << 22  # indices read at most


# the node classes its scan starts from: with none of them in the nodes given, it finds nothing
STARTS = frozenset(_OPS)


def picked_subset(walked: list[Any]) -> Slip | None:
    """The first min / max over a dimension among ``walked`` (a loss's first autograd nodes)
    whose saved indices leave some entries along that dimension unpicked, as a
    :class:`~.slip.Slip` ``"picked-subset"``: ``op`` the node's name, ``shape`` the reduced
    tensor's, ``other`` (the dimension, the entries picked by any row); ``None``: none."""
    for n in walked:
        name = type(n).__name__
        if name not in _OPS:
            continue
        indices = saved_value(n, "_saved_indices", hooked=False)
        dim = saved_value(n, "_saved_dim", hooked=False)
        sizes = saved_value(n, "_saved_self_sym_sizes", hooked=False)
        if (not isinstance(indices, torch.Tensor) or not isinstance(dim, int)
                or not isinstance(sizes, tuple) or not 0 < indices.numel() <= _MOST):
            continue
        shape = tuple(int(s) for s in sizes)
        if len(shape) < 2:
            continue
        dim %= len(shape)
        picked = int(torch.unique(indices).numel())
        if picked < shape[dim]:
            return Slip("picked-subset", name, shape, (dim, picked))
    return None
