"""The hooks on what happens to each parameter's ``.grad``, one part of a watch.

Each backward pass that accumulates into it (a tensor hook, then a post-accumulate-grad hook,
``torch.Tensor.register_post_accumulate_grad_hook``), each optimizer step that holds it (a
global step pre-hook, ``torch.optim.optimizer.register_optimizer_step_pre_hook``), a parameter
re-created by an assignment (:mod:`.registrations`), a ``GradScaler``'s ``scale`` and
``unscale_``, a ``backward()`` call and its loss scale, a hook of the user's on a parameter
(:mod:`.patches`, :mod:`.context`), the end of the block; a frozen parameter's stale ``.grad``
(:mod:`.frozengrads`).  They log the entries of :mod:`.events`; :meth:`GradEvents.notes` reads
them into :class:`.events.Note` lists.

A new event of ``.grad``: its hook here, its note in :mod:`.events`, its finding in
:mod:`.eventfindings`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

import torch
from torch.optim.optimizer import register_optimizer_step_post_hook as _post_hook
from torch.optim.optimizer import register_optimizer_step_pre_hook as _pre_hook

from ..graph.values import fingerprint, local_sum, same_print
from ..graph.values import norm as _norm
from . import context, events, observed, patches, sites
from .events import KEPT, Entry, Note, PassEntry, StepEntry
from .frozengrads import FrozenGrads
from .gradprobes import GradProbes
from .maskmoves import MaskMoved, MaskMoves
from .model import Watched
from .observed import Ended, FrozenMoved, Holding, Raised, message
from .registrations import Registrations
from .schedules import ScheduleOrder
from .stepmoves import StepMoves, Unmoved

__all__ = ["Ended", "FrozenMoved", "GradEvents", "Holding", "Raised"]


class GradEvents:
    """The ``.grad`` event hooks of a watch and their log (see :func:`gradarg.watch`).

    Parameters
    ----------
    watched : Watched
        The model and the step's progress, shared with the other parts.
    """

    def __init__(self, watched: Watched):
        self.watched = watched
        self._on_zero: Callable[[], None] = lambda: None
        self._running: Callable[[], tuple[str, str] | None] = lambda: None
        owner = watched.owner
        self._handles: list[Any] = []  # for the whole block
        self._log: list[Entry] = []  # every .grad event of the block, in order: notes()
        self._log_limit = 2 * KEPT * (len(owner) + 1)
        self._changes = 0  # bumped at each entry and accumulation: the record's cache key
        self._pending: dict[int, PassEntry] = {}  # id(tensor) -> its pass awaiting accumulation
        self._steps_seen = 0  # optimizer steps holding a watched parameter
        # the smallest trainable parameter: its sum at each call of the model and at the block's
        # end (a change: an update ran), its .grad's norm at each step (a change: an edit)
        trainable = [p for p in owner if p.requires_grad and p.numel()]
        self._probe = min(trainable, key=lambda q: q.numel()) if trainable else None
        self._probes = GradProbes(self._probe)  # .grad norms a step compares with its passes
        self._moved: dict[int, float] = {}
        self._moved_end: float | None = None
        self._held_by: dict[int, Holding] = {}  # per optimizer
        self._stepped: dict[int, Holding] = {}  # optimizers whose step held a watched param
        self._closing: dict[int, tuple[Holding, int]] = {}  # closure steps, read at their end
        self._frozen_before: dict[Any, tuple[float, ...]] = {}  # param -> fingerprint at the step
        self._frozen = FrozenGrads()  # whether a frozen parameter's .grad is stale at a step
        self._frozen_moved: dict[str, FrozenMoved] = {}
        self._hook_moved: dict[str, FrozenMoved] = {}  # .grad zeroed by a hook, moved by a step
        self._scales = context.LossScales()
        self._scale_now: float | None = 1.0  # the last backward()'s loss scale
        self._params = context.ParamHooks(self._param_hook)  # hooks of the user's read around
        self._masks = MaskMoves()  # entries whose gradient those hooks zeroed, moved by a step
        self._params.masked = self._masks.masked
        ddp = [m for m in watched.names if type(m).__name__ == "DistributedDataParallel"]
        self._sync = context.DdpSync(ddp) if watched.engine == "DDP" and ddp else None
        self._ended: Ended | None = None
        self._zeroed: dict[int, Holding] = {}  # optimizers whose zero_grad ran in the block
        # optimizers seen holding no watched parameter but tensors that require grad (a module
        # replaced before the watch began); those whose step held none (it moves nothing)
        self._stray: dict[int, Holding] = {}
        self._stray_stepped: dict[int, Holding] = {}
        self._scaler_steps: list[tuple[bool, float]] = []  # (optimizer step ran, scale after)
        self._steps_at_scaler = 0
        self._regs = Registrations(watched)  # re-created parameters
        self.moves = StepMoves()  # what each step changed
        self._order = ScheduleOrder()  # learning-rate schedulers' steps against the optimizers'
        self._final: dict[Any, float | None] | None = None  # .grad norms when the block ended
        self._got: list[PassEntry] = []  # this step's passes
        self.prior_missing: list[str] = []  # trainable parameters the last step's passes missed
        self._raised: Raised | None = None  # the last backward() that raised
        self._losses = observed.Losses([], None)  # the last backward() call's losses
        self._first_bad_at: float | None = None  # when this step's first NaN/Inf gradient came

    def listen(self, *, on_zero: Callable[[], None],
               running: Callable[[], tuple[str, str] | None]) -> None:
        """``on_zero()`` is called at each exactly-zero gradient of a pass (the graph notes
        read the factors then); ``running()`` returns the innermost module call running, as
        ``(name, class name)``, or ``None``."""
        self._on_zero, self._running = on_zero, running
        self._regs.running = self._params.running = running

    # -- read-only views ----------------------------------------------------------------------
    @property
    def passes(self) -> list[PassEntry]:  # this step's gradients that reached a parameter
        return self._got

    @property
    def raised(self) -> Raised | None:  # the last backward() that raised in the block
        return self._raised

    @property
    def losses(self) -> observed.Losses:
        """The last ``backward()`` call's losses, their nodes (dropped at the block's end)."""
        return self._losses

    def forget_losses(self) -> None:  # the block ended: the graph is not kept
        self._losses = self._losses._replace(nodes=[])

    @property
    def first_nonfinite_at(self) -> float | None:
        """When (``time.time()``) this step's first NaN/Inf gradient came (``None``: never)."""
        return self._first_bad_at

    @property
    def changes(self) -> int:  # a counter bumped at each logged event: the record's cache key
        return self._changes

    @property
    def ended(self) -> Ended | None:
        """The exception that ended the ``with`` block (``None``: none, or it has not ended)."""
        return self._ended

    def steps_since(self, forward: int) -> list[StepEntry]:
        """The optimizer steps logged since call ``forward`` of the model started."""
        return [e for e in self._log if isinstance(e, StepEntry) and e.forward >= forward]

    @property
    def optimizers(self) -> list[Holding]:  # those whose step held a watched parameter
        return list(self._stepped.values())

    @property
    def seen_optimizers(self) -> list[Holding]:
        """Optimizers whose step or ``zero_grad()`` ran holding a watched parameter."""
        return list({**self._zeroed, **self._stepped}.values())

    @property
    def stray_optimizers(self) -> list[Holding]:
        """Optimizers seen (step or ``zero_grad``) holding no watched parameter but tensors
        that require grad: one of a module replaced before the watch began, or a GAN's other."""
        return list(self._stray.values())

    @property
    def stray_steps_seen(self) -> bool:  # a step holding no watched parameter ran
        return bool(self._stray_stepped)

    @property
    def scaler_steps(self) -> list[tuple[bool, float]]:
        """Each ``GradScaler.step`` observed: whether it ran the optimizer's step (``False``:
        skipped, inf/NaN in the unscaled ``.grad``) and the scale it found."""
        return list(self._scaler_steps)

    @property
    def frozen_moved(self) -> Mapping[str, FrozenMoved]:  # frozen ones a step moved, by name
        return MappingProxyType(self._frozen_moved)

    @property
    def unmoved(self) -> Mapping[str, Unmoved]:  # those the last step left unchanged, by name
        return MappingProxyType(self.moves.unmoved)

    @property
    def step_moves(self) -> Mapping[int, tuple[int, int, int, int]]:  # StepMoves.last
        return MappingProxyType(self.moves.last)

    @property
    def unfinished_steps(self) -> Mapping[int, str]:  # id -> class: a step that raised
        return MappingProxyType(self.moves.unfinished)

    @property
    def log(self) -> list[Entry]:  # every .grad event of the block, in order (do not modify)
        return self._log

    @property
    def mask_moved(self) -> Mapping[str, MaskMoved]:  # masked entries a step moved, by name
        return MappingProxyType(self._masks.moved)

    @property
    def schedules(self) -> ScheduleOrder:  # schedulers' steps seen (early, zeroed)
        return self._order

    @property
    def hook_moved(self) -> Mapping[str, FrozenMoved]:
        """Parameters a step moved after a hook of the user's zeroed their gradient, by name."""
        return MappingProxyType(self._hook_moved)

    @property
    def tensor_hooks(self) -> list[context.TensorHooked]:
        """This step's tensors of the graph with a hook of the user's, and the norms around."""
        return list(self._params.tensors)

    def synced(self, forward: int) -> bool | None:
        """Under DDP, whether the backward of call ``forward`` of the model all-reduced the
        gradients (``None``: not under DDP, or not read)."""
        return None if self._sync is None else self._sync.synced(forward)

    @property
    def steps_seen(self) -> int:  # optimizer steps that held a watched parameter
        return self._steps_seen

    @property
    def moved(self) -> Mapping[int, float]:  # the probe's sum at each call of the model
        return MappingProxyType(self._moved)

    @property
    def moved_end(self) -> float | None:  # the probe's sum when the block ended (None: not read)
        return self._moved_end

    @property
    def probe_name(self) -> str:  # the parameter whose sum tells whether an update ran
        p = self._probe
        return self.watched.owner[p][0] if p is not None else "the parameters"

    @property
    def replaced(self) -> Mapping[str, events.Replacement]:  # assigned a new nn.Parameter
        return self._regs.replaced

    @property
    def replacement_got(self) -> Mapping[str, float]:  # a re-created one's new gradient norm
        return self._regs.got

    @property
    def final(self) -> dict[Any, float | None] | None:
        """Parameter -> norm of ``.grad`` when the block ended (``None``: not read yet)."""
        return self._final

    # -- life cycle ---------------------------------------------------------------------------
    def attach(self) -> None:
        """Hook every parameter that requires grad, and the optimizers' steps."""
        for p in self.watched.owner:
            if p.requires_grad:
                self.hook_param(p)
        self._frozen.start(self.watched.owner)
        self._handles += [_pre_hook(self._step_hook), _post_hook(self._after_step_hook)]
        self._handles += self._order.attach()
        for handle in (self._regs.attach(), patches.register_unscale_hook(self._unscale_hook),
                       patches.register_scale_hook(self._scales.scaled),
                       patches.register_hook_registration_hook(self._params.registered)):
            if handle is not None:
                self._handles.append(handle)
        self._handles.append(patches.register_backward_error_hook(self._raised_hook))
        self._handles.append(patches.register_backward_call_hook(self._backward_call_hook))
        self._handles.append(patches.register_backward_done_hook(self._params.backward_done))
        self._handles.append(patches.register_zero_grad_hook(self._zero_grad_hook))
        handle = patches.register_scaler_step_hook(self._scaler_step_hook)
        if handle is not None:
            self._handles.append(handle)

    def hook_param(self, p: torch.Tensor, live: torch.Tensor | None = None) -> None:
        """Hook ``p`` (or ``live``, the tensor FSDP2 computes with in its place)."""
        t = p if live is None else live
        self._params.hook(t, p, live)  # before and after the hooks of the user's on it
        self._handles.append(t.register_post_accumulate_grad_hook(self._accumulated_hook(p)))

    def new_step(self) -> None:
        """A new step begins: this step's passes are forgotten (the log keeps them)."""
        if self._got:  # the parameters the last step's passes missed (DDP waits for them)
            got = {id(e.param) for e in self._got}
            self.prior_missing = [n for p, (n, _) in self.watched.owner.items()
                                  if p.requires_grad and id(p) not in got]
        self._regs.new_step()
        self._params.new_step()
        self._got = []
        self._final = None
        self._first_bad_at = None
        self._params.zeroed.clear()

    def forward_started(self, forward: int) -> None:
        """Call ``forward`` of the model starts: the probe's sum is read."""
        if self._probe is not None:
            if (total := local_sum(self._probe)) is not None:
                self._moved[forward] = total
            if len(self._moved) > 4 * KEPT:
                del self._moved[min(self._moved)]
        if self._sync is not None:  # under DDP: whether this forward's backward all-reduces
            self._sync.note(forward)

    def detach(self) -> list[Any]:
        """The handles of every hook this part put on, for the caller to remove."""
        handles = self._handles + self._regs.detach() + self._params.detach()
        self._handles = []
        return handles

    # -- the hooks ----------------------------------------------------------------------------
    def _param_hook(self, p: torch.Tensor, live: torch.Tensor | None = None,
                    make: Callable[..., PassEntry] = PassEntry):
        held_by = p if live is None else live
        watched, pending, key, fresh = self.watched, self._pending, id(held_by), self._frozen.fresh

        def hook(g):
            watched.backward_seen = True
            fresh.add(id(p))  # it requires grad at this pass: its .grad is made now
            held = held_by.grad
            n = _norm(g)
            entry = make(p, n, None if held is None else _norm(held), g.is_sparse,
                         None, watched.forwards)
            self._got.append(entry)
            self._log_entry(entry)
            pending[key] = entry  # completed once the pass accumulated
            if n == 0.0:
                self._on_zero()
            elif self._first_bad_at is None and not math.isfinite(n):
                self._first_bad_at = time.time()
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
            held, grad = entry.held, t.grad
            if grad is None:  # cleared by a hook of the user's
                after = None
            elif held is None or held == 0.0:
                after = entry.grad
            else:
                after = _norm(grad) if self.watched.exact else None
            entry.after, entry.accumulated = after, True
            self._changes += 1
            self._probes.accumulated(p, after)
        return hook

    def _log_entry(self, entry: Entry) -> None:
        log = self._log
        log.append(entry)
        self._changes += 1
        if len(log) > self._log_limit:
            cut = len(log) // 2
            scale = next((e for e in reversed(log[:cut]) if isinstance(e, events.ScaleEntry)), None)
            del log[:cut]  # the oldest half: the notes keep the latest KEPT each
            if scale is not None:  # the loss scale the kept passes came with
                log.insert(0, scale)

    def _step_hook(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        """An optimizer step begins: the watched parameters it holds, whose ``.grad`` is None,
        the norms of what it reads (of the smallest parameter's alone when unchanged since its
        pass), the sums of frozen parameters it holds with a ``.grad``."""
        self._order.stepped(optimizer)
        cached = observed.fed(self._holding(optimizer))  # foreign tensors with a .grad noted
        held = cached.held
        if not held:
            if cached.foreign:
                self._stray.setdefault(id(optimizer), cached)
            if cached.size:  # it can move no parameter of the model (buffers...): stepped still
                self._stray_stepped.setdefault(id(optimizer), cached)
                self._changes += 1
            return
        self._steps_seen += 1
        self._stepped.setdefault(id(optimizer), cached)
        self.moves.before(optimizer, held, self.watched.owner)
        self._masks.before(optimizer, held)
        if patches.given_closure(args, kwargs):
            self._closing[id(optimizer)] = (cached, self._steps_seen)  # backward runs inside
        else:
            self._read_step(optimizer, cached)

    def _read_step(self, optimizer: Any, cached: Holding) -> None:  # at its start, or its end
        held = cached.held
        grads = [p.grad for p in held]
        norms = None
        if self.watched.exact:  # the probes' norms against their passes (gradprobes)
            norms = self._probes.read(held, grads, cached.has_probe)
        if norms is None and (self.watched.exact or self.watched.engine == "DDP"):
            # under DDP .grad holds the processes' average (a plain tensor: its norm is
            # local); under FSDP2 a sharded DTensor (a norm is a collective): None-ness only
            norms = {p: _norm(g) for p, g in zip(held, grads, strict=True) if g is not None}
        for p, g in zip(held, grads, strict=True):  # sums as the post-step hook reads them
            if g is not None and not p.requires_grad and self._frozen.stale(p) \
                    and (total := fingerprint(p)) is not None:
                self._frozen_before[p] = total
        self._frozen.read(held)
        zeroed = self._params.zeroed
        if zeroed:  # a zero gradient from a hook: does the step still move it?
            for p in held:
                if id(p) in zeroed and p.grad is not None and (total := fingerprint(p)) is not None:
                    self._frozen_before[p] = total
        if cached.has_probe:
            self._probes.compared()
        self._log_entry(StepEntry(held, [g is None for g in grads], norms,
                                  self.watched.forwards, type(optimizer).__name__,
                                  id(optimizer)))

    def _after_step_hook(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        """An optimizer step ended: what it left unchanged, the frozen parameters it moved."""
        if (c := self._closing.pop(id(optimizer), None)) and c[1] == self._steps_seen:
            self._read_step(optimizer, c[0])  # no step inside it read .grad (SAM's base does)
        self.moves.after(optimizer)
        self._masks.after(optimizer, self.watched.owner, observed.what_moves)
        if not self._frozen_before:
            return
        before, self._frozen_before = self._frozen_before, {}
        for p, total in before.items():
            now = fingerprint(p)
            if now is None or same_print(now, total):
                continue
            name = self.watched.owner[p][0]
            moved = self._frozen_moved if not p.requires_grad else self._hook_moved
            moved[name] = FrozenMoved(name, type(optimizer).__name__,
                                      observed.what_moves(optimizer, p))

    def _holding(self, optimizer: Any) -> Holding:
        """The watched parameters ``optimizer`` holds (cached while its groups keep their size)."""
        return observed.holding(optimizer, self._held_by, self.watched.owner, self._probe)

    def _zero_grad_hook(self, optimizer: Any) -> None:
        """An optimizer's ``zero_grad()`` ran: what it holds is known even without a step."""
        cached = self._holding(optimizer)
        self._frozen.read(cached.held)
        if cached.held:
            self._zeroed.setdefault(id(optimizer), cached)
        elif cached.foreign:
            self._stray.setdefault(id(optimizer), cached)

    def _scaler_step_hook(self, scaler: Any, optimizer: Any, when: str) -> None:
        """Around ``GradScaler.step(optimizer)``: whether the optimizer's step ran."""
        if not scaler.is_enabled() or not self._holding(optimizer).held:
            return
        if when == "before":
            self._steps_at_scaler = self._steps_seen
            return
        self._scaler_steps.append((self._steps_seen > self._steps_at_scaler,
                                   float(scaler.get_scale())))
        self._changes += 1

    def _backward_call_hook(self, tensors: Any) -> None:
        """``torch.autograd.backward(tensors, ...)`` is called: the losses (``observed.Losses``)
        and their loss scale (logged when it differs from the last call's)."""
        self._params.backward_called(tensors)  # the gradient before hooks of the user's
        self._losses = observed.losses_of(tensors)
        scale = self._scales.of(self._losses[0])
        if scale != self._scale_now:
            self._scale_now = scale
            self._log_entry(events.ScaleEntry(scale, self.watched.forwards))

    def _raised_hook(self, error: BaseException) -> None:
        """``torch.autograd.backward`` raised ``error`` (it goes on to the caller)."""
        self._raised = Raised(type(error).__name__, message(error), self.watched.forwards,
                              self.watched.backward_seen)
        self._changes += 1

    def _unscale_hook(self, scaler: Any, optimizer: Any) -> None:
        """A ``GradScaler``'s ``unscale_(optimizer)`` ran: it multiplied the ``.grad`` of the
        parameters ``optimizer`` holds by 1 / scale.  The probe's expected norm follows it, so
        the next step reads every norm only when something else changed ``.grad``."""
        cached = self._holding(optimizer) if scaler.is_enabled() else None
        if cached is None or not cached.held:
            return
        factor = 1.0 / float(scaler.get_scale())
        self._log_entry(events.UnscaleEntry(cached.held, factor, self.watched.forwards))
        self._probes.unscaled(cached.held, cached.has_probe, factor)

    def ended_by(self, error: BaseException) -> None:
        """The ``with`` block ends with ``error`` (its ``__exit__`` saw it)."""
        by_backward = self._raised is not None and self._raised.message == message(error)
        self._ended = Ended(type(error).__name__, message(error), sites.where(error), by_backward,
                            self.watched.forwards)
        self._changes += 1

    def end(self) -> None:
        """The block ends: ``.grad`` of every parameter is read (its norm), and the probe."""
        self._final = {p: None if p.grad is None else _norm(p.grad) for p in self.watched.owner}
        self._log_entry(events.EndEntry(self._final, self.watched.forwards))
        if self._probe is not None:
            self._moved_end = local_sum(self._probe)

    def notes(self) -> dict[torch.Tensor, list[Note]]:
        """The log as :class:`.events.Note` lists, one per parameter (the latest KEPT)."""
        return events.read_log(self._log)

