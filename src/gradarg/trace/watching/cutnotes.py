"""The calls of trainable modules whose outputs had no autograd history, noted by the recorder
(:mod:`.recorder`) as each returns: the grad mode each ran in and, for a call that ran with
recording off, where it was called and the switch around it that the stack shows
(:func:`gradarg.trace.why.located.call_site`: a ``torch.no_grad()`` decorator or ``with``
block).  :mod:`.cutcalls` says them.

Imports :mod:`.graphnotes` (``reentrant_checkpoint``) and :mod:`gradarg.trace.why.located`
only.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from types import MappingProxyType

import torch

from ..why.located import Site, call_site
from . import graphnotes

__all__ = ["CutNotes"]


class CutNotes:
    """The cut calls of one step (:meth:`reset` at each new step)."""

    def __init__(self) -> None:
        self._calls: list[tuple[int, str]] = []  # (call, 'no_grad' | 'inference_mode' | 'on')
        self._sites: dict[int, Site] = {}

    def reset(self) -> None:
        self._calls, self._sites = [], {}

    def note(self, index: int) -> None:
        """Call ``index`` returned outputs without history although its module is trainable:
        ``torch.no_grad()`` around it, or detached; its grad mode read now."""
        mode = ("inference_mode" if torch.is_inference_mode_enabled() else
                "on" if torch.is_grad_enabled() else
                graphnotes.reentrant_checkpoint() or "no_grad")
        self._calls.append((index, mode))
        if mode in ("no_grad", "inference_mode"):  # the line, and the switch around it
            self._sites[index] = call_site(inspect.currentframe())

    @property
    def calls(self) -> list[tuple[int, str]]:
        """``(call, grad mode)``: ``'no_grad'``, ``'inference_mode'``, ``'on'`` or a
        checkpoint kind."""
        return list(self._calls)

    @property
    def sites(self) -> Mapping[int, Site]:
        """Call that ran with recording off -> where it was called."""
        return MappingProxyType(self._sites)
