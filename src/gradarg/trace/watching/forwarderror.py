"""The model's forward that raised: the error, read by a forward hook on the model that torch
calls even when the forward raises (``register_forward_hook(..., always_call=True)``, public)
from the exception being handled (``sys.exc_info()``), and the innermost module whose call
began and never returned (the recorder's calls of the step).  An error the user's code catches
inside the ``with`` block (a step wrapped in ``try``) is seen too; the block's own ending is
:func:`.reads.block_ended`'s.

Imports :mod:`.patches` only.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, NamedTuple

import torch

from . import patches

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = ["ForwardErrors", "Raised", "forward_raised"]


class Raised(NamedTuple):
    """The forward of the model raised ``kind`` with ``message`` (its first line)."""

    kind: str
    message: str


class ForwardErrors:
    """The latest forward of the model that raised (:attr:`last`), cleared by a forward that
    returns."""

    def __init__(self, model: torch.nn.Module):
        self.model = model
        self.last: Raised | None = None
        self._handles: list[Any] = []

    def attach(self) -> None:
        self._handles = [self.model.register_forward_hook(patches.module_hook(self._ended),
                                                          always_call=True)]

    def detach(self) -> list[Any]:
        handles, self._handles = self._handles, []
        return handles

    def _ended(self, module: Any, args: Any, out: Any) -> None:
        error = sys.exc_info()[1]
        if out is None and error is not None:
            self.last = Raised(type(error).__name__, str(error).split("\n")[0][:300])
        else:
            self.last = None


def forward_raised(w: GradWatch) -> str:
    """``"; the model's last forward raised ..."``, with the innermost module whose call of
    the recorded step began and never returned; ``""`` when the last forward returned."""
    r = w.failed.last
    if r is None:
        return ""
    names = {id(m): n for n, m in w.model.named_modules()}
    open_calls = [c.module for c in w.calls.raw if c.outs is None]
    inner = open_calls[-1] if open_calls else None
    where = ("" if inner is None or inner is w.model else
             f" inside module '{names.get(id(inner), '?')}' ({type(inner).__name__}), whose "
             f"call began and never returned")
    return (f"; the model's last forward raised {r.kind}{where} (observed: the call raised, "
            f"so that step has no loss, backward or optimizer step): {r.message}")
