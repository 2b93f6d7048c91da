"""The gradient-arrival hooks of :mod:`.recorder`: each stores one norm at its slot.

Bound with :func:`functools.partial` (no closure per tensor).  Imports torch, the norm of
:mod:`..graph.values` and :class:`.model.Watched` only.
"""

from __future__ import annotations

import torch

from ..graph.values import norm as _norm
from .model import Watched

__all__ = ["leaf_arrived", "node_arrived"]


def leaf_arrived(watched: Watched, arrivals: list[tuple[int, float]], slot: int,
                 g: torch.Tensor) -> None:
    """A leaf tensor's hook: its gradient's norm arrived at ``slot``."""
    watched.backward_seen = True
    if g is not None:  # None: an autograd.grad inside a backward asked for it, unused
        arrivals.append((slot, _norm(g)))


def node_arrived(watched: Watched, arrivals: list[tuple[int, float]],
                 outputs: list[tuple[int, int]], grads: tuple[torch.Tensor | None, ...]) -> None:
    """A node's pre-hook: the norm of the gradient of each hooked output ``(output number,
    slot)`` arrived at its slot."""
    watched.backward_seen = True
    for nr, slot in outputs:
        g = grads[nr]
        if g is not None:
            arrivals.append((slot, _norm(g)))
