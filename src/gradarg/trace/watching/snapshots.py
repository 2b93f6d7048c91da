"""A ``state_dict()`` kept as a snapshot that is not a copy, and a ``load_state_dict`` that
writes back what the parameters already hold.

``Module.state_dict()`` "is a shallow copy. It contains references to the module's parameters
and buffers" (its docstring, https://docs.pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.state_dict):
its tensors share the parameters' storage, so every in-place optimizer step after it changes
it too.  Kept as "the weights before" (Reptile's ``weights_before``, a best checkpoint, an
initialisation to interpolate from), it holds the weights after those steps: a difference
``weights_after - weights_before`` is exactly zero, and loading it back changes nothing.

Seen here: while a watch listens, the model's ``state_dict()`` calls
(``Module.register_state_dict_post_hook``: how many of the parameters' entries share their
storage, and the optimizer steps seen so far) and ``load_state_dict`` calls
(``Module.register_load_state_dict_pre_hook``: how many parameters are loaded with values equal,
bit for bit, to what they hold), each with the user's line.

Imports :mod:`.finding`, :mod:`.patches` and :mod:`.sites` only.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any, NamedTuple

import torch

from . import patches
from .finding import Finding, Options, shown
from .sites import user_site

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = ["SAMPLE", "Load", "Snapshot", "Snapshots", "snapshot_aliases"]

SAMPLE = 32  # entries of each aliasing snapshot entry read when taken, evenly spaced


class Snapshot(NamedTuple):
    """``state_dict()`` of the model called at ``site`` after ``steps`` optimizer steps;
    ``aliases``: the parameters whose entry shares the parameter's storage (not a copy);
    ``refs``: weak references to those entries (dead once the dict is dropped, as in
    ``copy.deepcopy(model.state_dict())``), each with :data:`SAMPLE` of its entries' positions
    and values when it was taken."""

    site: str
    steps: int
    aliases: tuple[str, ...]
    refs: tuple[tuple[weakref.ref, torch.Tensor, torch.Tensor], ...]

    def kept(self) -> bool:
        """Whether the caller still holds one of the aliasing entries."""
        return any(r() is not None for r, _, _ in self.refs)

    def changed(self) -> bool:
        """Whether a held entry's sampled values differ from those it had when it was taken."""
        for r, at, was in self.refs:
            t = r()
            if t is not None and not torch.equal(t.detach().reshape(-1)[at], was):
                return True
        return False


def _sampled(t: torch.Tensor) -> tuple[weakref.ref, torch.Tensor, torch.Tensor]:
    at = torch.linspace(0, t.numel() - 1, min(SAMPLE, t.numel()), device=t.device).long()
    return weakref.ref(t), at, t.detach().reshape(-1)[at].clone()


class Load(NamedTuple):
    """``load_state_dict`` into the model at ``site`` after ``steps`` optimizer steps: of the
    ``total`` parameters it loaded, ``same`` (names) got values equal to what they held;
    ``kept``: the snapshots (indices into ``taken``) still held then, and changed since."""

    site: str
    steps: int
    same: tuple[str, ...]
    total: int
    kept: tuple[int, ...]


class Snapshots:
    """The model's ``state_dict()`` and ``load_state_dict`` calls seen while listening
    (``taken``, ``loads``); ``grads.steps_seen``: the optimizer steps seen so far."""

    def __init__(self, model: torch.nn.Module, grads: Any):
        self.model, self.grads = model, grads
        self.taken: list[Snapshot] = []
        self.loads: list[Load] = []
        self._handles: list[Any] = []

    def attach(self) -> None:
        self._handles = [  # hooks that a copy of the model (deepcopy, torch.save) leaves out
            self.model.register_state_dict_post_hook(patches.module_hook(self._taken,
                                                                         marked=True)),
            self.model.register_load_state_dict_pre_hook(patches.module_hook(self._loading))]

    def detach(self) -> list[Any]:
        handles, self._handles = self._handles, []
        return handles

    def _taken(self, module: Any, state: Any, prefix: str, meta: Any) -> None:
        try:
            aliases = {n: t for n, p in module.named_parameters()
                       if isinstance(t := state.get(prefix + n), torch.Tensor)
                       and t.numel() and t.untyped_storage().data_ptr()
                       == p.untyped_storage().data_ptr()}
            if aliases:
                self.taken.append(Snapshot(user_site(), self.grads.steps_seen, tuple(aliases),
                                           tuple(_sampled(t) for t in aliases.values())))
        except Exception:  # noqa: BLE001 (never break the user's state_dict)
            return

    def _loading(self, module: Any, state: Any, prefix: str, *rest: Any) -> None:
        try:
            same, total = [], 0
            for n, p in module.named_parameters():
                t = state.get(prefix + n)
                if isinstance(t, torch.Tensor) and t.shape == p.shape:
                    total += 1
                    if torch.equal(t.detach().to(p.device, p.dtype), p.detach()):
                        same.append(n)
            kept = tuple(i for i, t in enumerate(self.taken) if t.changed())
            self.loads.append(Load(user_site(), self.grads.steps_seen, tuple(same), total, kept))
        except Exception:  # noqa: BLE001 (never break the user's load_state_dict)
            return


def snapshot_aliases(w: GradWatch, o: Options) -> Finding:
    """A ``load_state_dict`` that changed no parameter while an aliasing ``state_dict()``
    snapshot taken before optimizer steps was still held: a problem (the snapshot is not a
    copy); a no-op load alone, or a held aliasing snapshot that steps changed, is a note."""
    del o
    s = w.snapshots
    noop = next((ld for ld in s.loads if ld.total and len(ld.same) == ld.total), None)
    stale = ([s.taken[i] for i in noop.kept if s.taken[i].steps < noop.steps] if noop else
             [t for t in s.taken if t.changed() and t.steps < w.grads.steps_seen])
    if noop is None and not stale:
        return Finding("state_dict snapshot", True)
    at = lambda site: f" at {site}" if site else ""
    if stale:
        t = stale[0]
        later = (noop.steps if noop else w.grads.steps_seen) - t.steps
        snap = (f"model.state_dict(){at(t.site)} is not a copy: it holds references to the "
                f"parameters' own storage ({len(t.aliases)} of them: {shown(list(t.aliases), 3)}; "
                f"torch's docstring: 'a shallow copy'), so it changed with the {later} optimizer "
                f"step(s) after it (observed: a sample of its entries)")
        fix = ("; to keep the weights of that moment, copy them: "
               "copy.deepcopy(model.state_dict()) or {k: v.clone() for k, v in "
               "model.state_dict().items()}")
        if noop is not None:
            return Finding("state_dict snapshot", True, (
                f"load_state_dict{at(noop.site)} wrote back values equal, bit for bit, to what "
                f"all {noop.total} parameters held (observed: it changed nothing): {snap}, and "
                f"whatever is computed from it and the current weights (weights_after - "
                f"weights_before) is exactly zero{fix}"))
        return Finding("state_dict snapshot", True, note=(
            f"{snap}: it now holds the weights after those steps{fix}"))
    assert noop is not None
    return Finding("state_dict snapshot", True, note=(
        f"load_state_dict{at(noop.site)} wrote back values equal, bit for bit, to what all "
        f"{noop.total} parameters held: it changed nothing"))
