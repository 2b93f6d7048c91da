"""Whether a frozen parameter's ``.grad``, met at an optimizer step, is stale: left from before
it was frozen (the step then moves a parameter its owner froze: momentum, weight decay, or the
old gradient itself), or made in this block by a backward pass while it still required grad
(two adapters switched by ``requires_grad_``, each stepped on its own gradient: a step like
any other).

Made in this block: a backward pass reached the parameter (observed by the watch's hook on it,
:attr:`FrozenGrads.fresh`), or its ``.grad`` is not the tensor, with the same sum, that it was
when the block began or when a step or ``zero_grad`` last held it (a parameter frozen since
the block began has no hook: its ``.grad`` is compared).  ``.grad`` tensors that are not plain
tensors (a sharded ``DTensor``) are compared by identity only (a sum would be a collective).

Imports nothing of the trace room.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch

__all__ = ["FrozenGrads"]

_UNKNOWN = object()


def _key(p: torch.Tensor) -> tuple[int, float | None] | None:
    g = p.grad
    if g is None:
        return None
    return id(g), float(g.detach().sum()) if type(g) is torch.Tensor else None


class FrozenGrads:
    """What each frozen parameter's ``.grad`` was when it was last read (see the module)."""

    def __init__(self) -> None:
        self.fresh: set[int] = set()  # id(p): a pass reached p since a step or zero_grad held it
        self._seen: dict[int, Any] = {}
        self._unhooked: set[int] = set()  # frozen when the block began: no hook sees its passes

    def start(self, params: Iterable[torch.Tensor]) -> None:
        """The block begins: the ``.grad`` of each parameter that does not require grad."""
        for p in params:
            if not p.requires_grad:
                self._seen[id(p)] = _key(p)
                self._unhooked.add(id(p))

    def stale(self, p: torch.Tensor) -> bool:
        """Whether frozen ``p``'s ``.grad`` is the one it had when last read (or unknown)."""
        if id(p) in self.fresh:
            return False
        seen = self._seen.get(id(p), _UNKNOWN)
        return seen is _UNKNOWN or seen == _key(p)

    def read(self, held: Iterable[torch.Tensor]) -> None:
        """A step or ``zero_grad`` held ``held``: their ``.grad`` as it is now."""
        for p in held:
            self.fresh.discard(id(p))
            if p.requires_grad and id(p) not in self._unhooked:
                self._seen.pop(id(p), None)  # its hook will see its next pass
            else:
                self._seen[id(p)] = _key(p)
