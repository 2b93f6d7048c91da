"""What every part of a watch shares, declared once: the watched model (its modules' and
parameters' names, the engine that spreads it over processes) and the progress of the step.

The parts of :class:`~gradarg.trace.watching.watch.GradWatch` (the module-call
:class:`~gradarg.trace.watching.recorder.Recorder`, the ``.grad`` events of
:class:`~gradarg.trace.watching.gradhooks.GradEvents`, the graph notes of
:class:`~gradarg.trace.watching.graphnotes.GraphNotes`) each hold the same :class:`Watched`;
none holds another's state.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from .records import ROOT_NAME

__all__ = ["Watched", "engine_of"]


def engine_of(model: torch.nn.Module) -> tuple[str | None, int, int]:
    """``("DDP" | "FSDP2" | None, rank, world size)``: the engine that spreads ``model`` over
    processes, read from its modules' types once ``torch.distributed`` is initialised."""
    dist = torch.distributed
    if not (dist.is_available() and dist.is_initialized()):
        return None, 0, 1
    rank, world = dist.get_rank(), dist.get_world_size()
    from torch.nn.parallel import DistributedDataParallel

    fsdp_module: Any = None
    try:
        from torch.distributed.fsdp import FSDPModule

        fsdp_module = FSDPModule
    except ImportError:  # torch < 2.6 has no FSDP2 under this name
        pass
    for m in model.modules():
        if isinstance(m, DistributedDataParallel):
            return "DDP", rank, world
        if fsdp_module is not None and isinstance(m, fsdp_module):
            return "FSDP2", rank, world
    return None, rank, world


@dataclass(eq=False)
class Watched:
    """The watched model, read once, and the step's progress (the only state the parts share).

    Attributes
    ----------
    model : torch.nn.Module
        The watched model.
    names : dict
        Module -> its name in ``model.named_modules()`` (``ROOT_NAME`` for the model).
    owner : dict
        Parameter -> ``(full name, name of the module that registers it)``.
    engine : {"DDP", "FSDP2"} or None
        The engine that spreads the model over processes; ``rank`` and ``world`` its process.
    exact : bool
        Whether the hooks read exact norms (not under DDP/FSDP2: there ``.grad`` is
        overwritten by the average of the processes, and a sharded norm is a collective).
    forwards : int
        Calls of the watched model started in the block.
    backward_seen : bool
        Whether a backward pass reached the model in the current step.
    active : bool
        Whether the hooks are on.
    """

    model: torch.nn.Module
    names: dict[Any, str] = field(default_factory=dict)
    owner: dict[torch.Tensor, tuple[str, str]] = field(default_factory=dict)
    engine: str | None = None
    rank: int = 0
    world: int = 1
    exact: bool = True
    forwards: int = 0
    backward_seen: bool = False
    active: bool = False

    @classmethod
    def of(cls, model: torch.nn.Module) -> Watched:
        """Read ``model`` once: its modules' and parameters' names and its engine."""
        names = {m: (n or ROOT_NAME) for n, m in model.named_modules()}
        owner: dict[torch.Tensor, tuple[str, str]] = {}
        for mname, m in model.named_modules():
            for pname, p in m.named_parameters(recurse=False):
                full = f"{mname}.{pname}" if mname else pname
                owner.setdefault(p, (full, mname or ROOT_NAME))
        engine, rank, world = engine_of(model)
        return cls(model, names, owner, engine, rank, world, exact=engine is None)

    def param_names(self) -> dict[Any, str]:
        """Parameter -> its full name."""
        return {p: name for p, (name, _) in self.owner.items()}
