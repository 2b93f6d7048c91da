"""Entries of a parameter whose gradient a hook of the user's turned to zero (a mask: pruning,
a frozen part of an embedding) and that an optimizer step moved all the same, observed for
:mod:`.gradhooks`: momentum and weight decay move an entry whose gradient is zero, so masking
the gradient does not freeze it.

The mask is what the hooks did: entries nonzero in the gradient before the user's hooks and
zero after them (:meth:`MaskMoves.masked`, from :mod:`.context`'s read of both sides).  Those
entries of the parameter are read before each optimizer step that holds it and again after.

Imports :func:`gradarg.trace.graph.values.stored` only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from ..graph.values import stored

__all__ = ["MaskMoved", "MaskMoves"]


@dataclass(frozen=True)
class MaskMoved:
    """``moved`` of the ``masked`` entries of parameter ``name`` whose gradient the user's
    hooks set to zero were changed by ``optimizer``'s step, which ``why`` moves them."""

    name: str
    masked: int
    moved: int
    optimizer: str
    why: str


class MaskMoves:
    """The masks the user's hooks made (by parameter), the entries read around each step, and
    :attr:`moved` (by name)."""

    def __init__(self) -> None:
        self._masks: dict[int, tuple[Any, torch.Tensor]] = {}  # id(p) -> (p, mask)
        self._before: dict[int, list[tuple[Any, torch.Tensor, torch.Tensor]]] = {}
        self.moved: dict[str, MaskMoved] = {}

    def masked(self, p: Any, raw: torch.Tensor, g: torch.Tensor) -> None:
        """``raw``: ``p``'s gradient before the user's hooks, ``g``: after them."""
        try:
            if raw.shape != g.shape or raw.layout != torch.strided:
                return
            mask = (g == 0) & (raw != 0)
        except (RuntimeError, TypeError):
            return
        if bool(mask.any()):
            self._masks[id(p)] = (p, mask)
        else:
            self._masks.pop(id(p), None)

    def before(self, optimizer: Any, held: list[Any]) -> None:
        """``optimizer``'s step is about to run over ``held``."""
        if not self._masks:
            return
        read = []
        with torch.no_grad():
            for p in held:
                entry = self._masks.get(id(p))
                if entry is not None and entry[0] is p and p.grad is not None and stored(p):
                    read.append((p, entry[1], p.detach()[entry[1]].clone()))
        if read:
            self._before[id(optimizer)] = read

    def after(self, optimizer: Any, names: Any, why: Any) -> None:
        """``optimizer``'s step ran: masked entries it changed; ``names[p][0]``: a parameter's
        name, ``why(optimizer, p)``: what in the optimizer moves it."""
        for p, mask, values in self._before.pop(id(optimizer), []):
            with torch.no_grad():
                now = p.detach()[mask]
                moved = int((now != values).sum())
            name = names[p][0]
            if moved:
                self.moved[name] = MaskMoved(name, int(mask.sum()), moved,
                                             type(optimizer).__name__, why(optimizer, p))
            else:
                self.moved.pop(name, None)
