"""The hooks of :class:`.hooks.Recorder` on what happens to each parameter's ``.grad``: each
backward pass that accumulates into it (a tensor hook, then a post-accumulate-grad hook), each
optimizer step that holds it (a global step pre-hook), a parameter re-created by an assignment
(a global registration hook), the end of the block; and, at a few moments, what the graph and
the values show (:mod:`.graphnotes`: all-zero factors, where a failed backward stopped, the
forward's first NaN).  The notes they take are read by :mod:`.events`.

A base of :class:`.hooks.Recorder`, whose state (set up in its ``__init__`` and ``_reset``)
these methods share; a new event of ``.grad`` gets its hook here, its reading in
:mod:`.events`.
"""

from __future__ import annotations

from typing import Any

import torch

from ..graph.values import norm as _norm
from . import graphnotes
from .events import KEPT, Note, Replacement
from .records import ROOT_NAME

__all__ = ["StepHooks"]


class StepHooks:
    """The ``.grad`` event hooks and graph notes of :class:`.hooks.Recorder` (its base)."""

    # the recorder's state these hooks read and write (set in Recorder.__init__ / _reset)
    _owner: dict[torch.Tensor, tuple[str, str]]
    _names: dict[Any, str]
    _raw: list[Any]
    _stack: list[int]
    _param_got: list[list[Any]]
    _log: list[Any]
    _log_limit: int
    _changes: int
    _pending: dict[int, list[Any]]
    _forwards: int
    _steps_seen: int
    _probe: torch.Tensor | None
    _probe_after: float | None
    _moved_end: float | None
    _held_by: dict[int, tuple[Any, int, list[torch.Tensor], bool]]
    _exact: bool
    _registered: dict[tuple[Any, str], torch.Tensor]
    _replaced: dict[str, Replacement]
    _replacement_got: dict[str, float]
    _tensor_handles: list[Any]
    _final: dict[Any, float | None] | None
    _backward_seen: bool
    _active: bool
    _zero_blocked: Any
    _forward_nan: Any
    _stop: Any
    _node_owner: dict[Any, int]

    def _param_hook(self, p: torch.Tensor, live: torch.Tensor | None = None):
        held_by = p if live is None else live

        def hook(g):
            self._backward_seen = True
            held = held_by.grad
            # [parameter, norm, norm held before, sparse, norm after, forward, accumulated]
            entry = [p, _norm(g), None if held is None else _norm(held), g.is_sparse, None,
                     self._forwards, False]
            self._param_got.append(entry)
            self._log_entry(entry)
            self._pending[id(held_by)] = entry  # completed once the pass accumulated
            if entry[1] == 0.0 and self._zero_blocked is None:
                self._note_zeros()

        return hook

    def _accumulated_hook(self, p: torch.Tensor):
        """After a pass accumulated into ``p.grad``: its entry completed, with the norm of
        ``.grad`` after it (the pass's own gradient when ``.grad`` was empty before: no norm
        to take again)."""
        pending = self._pending

        def hook(t: torch.Tensor) -> None:
            entry = pending.pop(id(t), None)
            if entry is None:  # a pass whose gradient the tensor hook did not see
                return
            held, grad = entry[2], t.grad
            if grad is None:  # cleared by a hook of the user's
                after = None
            elif held is None or held == 0.0:
                after = entry[1]
            else:
                after = _norm(grad) if self._exact else None
            entry[4], entry[6] = after, True
            self._changes += 1
            if p is self._probe:
                self._probe_after = after

        return hook

    def _log_entry(self, entry: Any) -> None:
        log = self._log
        log.append(entry)
        self._changes += 1
        if len(log) > self._log_limit:
            del log[: len(log) // 2]  # the oldest half: the notes keep the latest KEPT each

    def _step_hook(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        """An optimizer step begins: which watched parameters it holds and whose ``.grad`` is
        None (always seen); norms are read for the probe (the smallest parameter), and for all
        of them when the probe's changed since its pass (a clip, an ``unscale_``, a
        ``zero_grad(set_to_none=False)`` acts on all): one small norm per step otherwise."""
        groups = optimizer.param_groups
        size = sum(len(g["params"]) for g in groups)
        cached = self._held_by.get(id(optimizer))
        if cached is None or cached[0] is not optimizer or cached[1] != size:
            owner = self._owner
            held = [p for g in groups for p in g["params"] if p in owner]
            has_probe = any(p is self._probe for p in held)
            self._held_by[id(optimizer)] = cached = (optimizer, size, held, has_probe)
        held = cached[2]
        if not held:
            return
        self._steps_seen += 1
        grads = [p.grad for p in held]
        probe, norms = self._probe, None
        if not self._exact:
            pass  # DDP/FSDP2: .grad holds the processes' average; None-ness only
        elif probe is not None and self._probe_after and probe.grad is not None \
                and cached[3]:
            n = _norm(probe.grad)
            a = self._probe_after
            norms = {probe: n}
            if not (n == a or abs(n / a - 1) <= 1e-5):
                norms = {p: _norm(g) for p, g in zip(held, grads, strict=True) if g is not None}
        else:
            norms = {p: _norm(g) for p, g in zip(held, grads, strict=True) if g is not None}
        if cached[3]:
            self._probe_after = None  # compared once: a later step has nothing to compare with
        self._log_entry(("step", held, [g is None for g in grads], norms, self._forwards))

    def _end(self) -> None:
        """The block ends: ``.grad`` of every parameter is read (its norm), and the probe."""
        self._final = {p: (None if p.grad is None else _norm(p.grad)) for p in self._owner}
        self._log_entry(("end", self._final, self._forwards))
        if self._probe is not None:
            self._moved_end = self._probe_sum()

    def notes(self) -> dict[torch.Tensor, list[Note]]:
        """The log as :class:`.events.Note` lists, one per parameter (the latest KEPT)."""
        notes: dict[torch.Tensor, list[Note]] = {}
        steps: dict[torch.Tensor, int] = {}
        nan = float("nan")

        def add(p: torch.Tensor, note: Note) -> None:
            got = notes.get(p)
            if got is None:
                got = notes[p] = []
            got.append(note)

        for e in self._log:
            if type(e) is list:  # a pass
                if e[6]:
                    add(e[0], Note("pass", e[1], e[2], e[4], e[5], steps.get(e[0], 0)))
            elif e[0] == "step":
                _, held, none, norms, forward = e
                for p, is_none in zip(held, none, strict=True):
                    steps[p] = steps.get(p, 0) + 1
                    if is_none:
                        add(p, Note("step", None, None, None, forward, steps[p]))
                    elif norms is not None and p in norms:
                        add(p, Note("step", None, norms[p], None, forward, steps[p]))
                    else:
                        add(p, Note("step", None, nan, None, forward, steps[p], measured=False))
            else:  # the end
                _, final, forward = e
                for p in notes:
                    add(p, Note("end", None, final.get(p), None, forward, steps.get(p, 0)))
        return {p: n[-KEPT:] for p, n in notes.items()}

    def _probe_sum(self) -> float:
        assert self._probe is not None
        t = self._probe.detach()
        if type(t).__name__ == "DTensor" and hasattr(t, "to_local"):
            t = t.to_local()  # this process's shard: no collective
        return float(t.sum())

    def _registration_hook(self, module: Any, name: str, param: Any) -> None:
        """A parameter is being registered on a module (``module.name = nn.Parameter(...)``):
        when another one was registered there when the watch began, note the replacement,
        and whether it runs inside that module's own call."""
        old = self._registered.get((module, name))
        if old is None or param is old:
            return
        full = self._owner[old][0]
        inside = None
        if self._stack:
            running = self._raw[self._stack[-1]].module
            inside = (self._names.get(running, ROOT_NAME), type(running).__name__)
        seen = self._replaced.get(full)
        if seen is None:
            mname = self._names.get(module, ROOT_NAME)
            self._replaced[full] = Replacement(full, mname, type(module).__name__, name,
                                               inside, self._forwards)
        else:
            self._replaced[full] = seen._replace(count=seen.count + 1)
        if isinstance(param, torch.Tensor) and param.requires_grad:
            got = self._replacement_got

            def hook(g, full=full):
                got[full] = _norm(g)

            self._tensor_handles.append(param.register_hook(hook))

    # -- what the graph and the values show (graphnotes) --------------------------------------
    def _note_forward(self, index: int) -> None:
        """An outermost call returned: where the forward's first NaN/Inf comes from."""
        try:
            self._forward_nan = graphnotes.forward_nan(self, index)
        except Exception:  # noqa: BLE001 (never break the user's forward)
            self._forward_nan = None

    def _note_zeros(self) -> None:
        """At the first exactly-zero gradient of a pass (the values as the forward used them):
        the parameters an all-zero factor blocks."""
        try:
            self._zero_blocked = graphnotes.zero_blocks(graphnotes.roots(self), self._names_of())
        except Exception:  # noqa: BLE001 (never break the user's backward)
            self._zero_blocked = {}

    def _names_of(self) -> dict[Any, str]:
        return {p: name for p, (name, _) in self._owner.items()}

    def stopped_at(self) -> graphnotes.Stop | None:
        """Where this step's backward stopped at a saved tensor modified in place, if it did
        (read again while the hooks are on; kept when the block ends)."""
        if self._active:
            self._note_stop()
        return self._stop

    def _note_stop(self) -> None:
        """Read while the graph is held, when some parameter that requires grad got none."""
        got = {p for p, *_ in self._param_got}
        if not self._backward_seen or all(p in got for p in self._owner if p.requires_grad):
            return
        try:
            self._stop = graphnotes.stopped(graphnotes.roots(self), self._names_of(), got,
                                            self._node_owner)
        except Exception:  # noqa: BLE001 (a saved tensor that cannot be read: nothing known)
            self._stop = None
