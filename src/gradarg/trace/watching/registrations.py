"""A registered parameter re-created while a watch runs (``self.w = nn.Parameter(...)`` in
``forward``), observed for :mod:`.gradhooks` by a global parameter registration hook
(``torch.nn.modules.module.register_module_parameter_registration_hook``): which parameter,
where the assignment ran, and the gradient the new tensor received.

Imports nothing of the trace room.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

import torch
from torch.nn.modules.module import register_module_parameter_registration_hook

from ..graph.values import norm as _norm
from .events import Replacement
from .records import ROOT_NAME

__all__ = ["Registrations"]


def _nobody() -> None:
    return None


class Registrations:
    """The parameters registered when the watch began, and those re-created since.

    Parameters
    ----------
    watched : Watched
        The model and the step's progress.

    Attributes
    ----------
    running : callable
        ``running()``: the innermost module call running, ``(name, class name)`` or ``None``
        (set by the owner).
    """

    def __init__(self, watched: Any):
        self.watched = watched
        self.running: Callable[[], tuple[str, str] | None] = _nobody
        # (module, attribute) -> the parameter registered there when the watch began
        self._registered: dict[tuple[Any, str], torch.Tensor] = {}
        # not under FSDP: it puts other tensors on the modules at each forward by itself
        swaps = watched.engine == "FSDP2" and any(
            any(True for _ in m.named_parameters(recurse=False)) for m in watched.names)
        if not swaps and not any(type(m).__name__ == "FullyShardedDataParallel"
                                 for m in watched.names):
            for m in watched.names:
                for pname, p in m.named_parameters(recurse=False):
                    self._registered[(m, pname)] = p
        self._replaced: dict[str, Replacement] = {}
        self._got: dict[str, float] = {}  # name -> norm the new tensor received
        self._step_handles: list[Any] = []  # on the new tensors of the current step

    @property
    def replaced(self) -> Mapping[str, Replacement]:
        """Parameters whose attribute was assigned a new ``nn.Parameter``, by name."""
        return MappingProxyType(self._replaced)

    @property
    def got(self) -> Mapping[str, float]:
        """Name -> norm of the gradient the new tensor of a re-created parameter received."""
        return MappingProxyType(self._got)

    def attach(self) -> Any:
        """The registration hook's handle (``None``: nothing to watch)."""
        if not self._registered:
            return None
        return register_module_parameter_registration_hook(self._hook)

    def new_step(self) -> None:
        """A new step: the hooks on the last step's new tensors come off."""
        for h in self._step_handles:
            h.remove()
        self._step_handles = []

    def detach(self) -> list[Any]:
        handles, self._step_handles = self._step_handles, []
        return handles

    def _hook(self, module: Any, name: str, param: Any) -> None:
        """A parameter is being registered on a module (``module.name = nn.Parameter(...)``):
        when another one was registered there when the watch began, note the replacement,
        and whether it runs inside that module's own call."""
        old = self._registered.get((module, name))
        if old is None or param is old:
            return
        watched = self.watched
        full = watched.owner[old][0]
        inside = self.running()
        seen = self._replaced.get(full)
        if seen is None:
            mname = watched.names.get(module, ROOT_NAME)
            self._replaced[full] = Replacement(full, mname, type(module).__name__, name,
                                               inside, watched.forwards)
        else:
            self._replaced[full] = seen._replace(count=seen.count + 1)
        if isinstance(param, torch.Tensor) and param.requires_grad:
            got = self._got

            def hook(g, full=full):
                if g is not None:
                    got[full] = _norm(g)
            self._step_handles.append(param.register_hook(hook))
