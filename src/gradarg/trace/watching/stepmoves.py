"""Whether each optimizer step changed the parameters it was handed, and whether the next step
starts from what it left, observed for :mod:`.gradhooks`: a few entries of each watched parameter the step holds, where its
``.grad`` is finite and not negligible next to the step's largest, are read before the step
and again after it.  A step that
leaves most of them bit for bit the same did not apply the gradient it read: the update was
below the spacing of the weights' floating-point numbers (``bfloat16`` / ``float16``
weights, or a learning rate decayed to almost nothing).  The samples of all the parameters
of one dtype are stacked and compared at once, and what does not change from step to step
(which parameters can be sampled and where, how the samples group: :class:`_Plan`) is worked
out again only when the parameters or their storages change (the optimizer-step part of the
watch's cost on the 10-layer MLP of ``benchmarks/watch.py`` fell from about 0.53 to 0.47 ms);
the fraction stated is of the sample.

Between two steps of an optimizer, a parameter whose storage was replaced (``param.data = t``:
its ``data_ptr()`` differs from the one the first step left) and whose sampled entries are
not what that step left starts the next step from other values (:attr:`StepMoves.swapped`):
an EMA's ``apply_shadow()`` without ``restore()``, weights assigned from elsewhere.  Edits in
place (a clamp, a renormalisation) keep the storage; those that put most entries the step
changed back to their values before it undo the update (:attr:`StepMoves.reverted`: weights
rounded back onto a quantisation grid after each step).

Imports :func:`gradarg.trace.graph.values.plain` only.
"""

from __future__ import annotations

import contextlib
import weakref
from dataclasses import dataclass
from typing import Any, NamedTuple

import torch

from ..graph.values import plain

__all__ = ["SAMPLE", "Reverted", "StepMoves", "Swapped", "Unmoved", "Uphill"]

SAMPLE = 32  # entries read per parameter and step, evenly spaced
_PLAIN = (torch.Tensor, torch.nn.Parameter)  # the types plain() reads (not subclasses)
UNMOVED = 0.5  # a parameter with at least this fraction of its sample unchanged is named
NEGLIGIBLE = 1e-6  # entries whose |.grad| is below this times the step's largest are not read


class Unmoved(NamedTuple):
    """A parameter the last optimizer step holding it left (mostly) unchanged: ``same`` of the
    ``read`` entries sampled where its ``.grad`` was finite and not negligible (above
    :data:`NEGLIGIBLE` times the largest sampled in the step) are bit for bit the same
    after ``optimizer``'s step; its dtype, its group's learning rate (``lr``) and the one a
    learning-rate scheduler started from (``initial_lr``, ``None`` without a scheduler), and
    the largest ``|.grad|`` among the entries read (``largest``)."""

    name: str
    optimizer: str
    same: int
    read: int
    dtype: torch.dtype
    lr: float | None
    initial_lr: float | None
    largest: float = 0.0


@dataclass(frozen=True)
class Swapped:
    """A parameter whose storage was replaced between two steps of ``optimizer`` (``steps``:
    the step after which, counted from 1), ``differ`` of its ``read`` sampled entries not
    what that step left."""

    name: str
    optimizer: str
    steps: int
    differ: int
    read: int


@dataclass(frozen=True)
class Reverted:
    """A parameter put back between two steps of ``optimizer``, in place (its storage kept):
    ``back`` of the ``moved`` sampled entries that step ``steps`` changed are again bit for
    bit what they were before it (rounded back onto a quantisation grid, a clamp to the old
    values, a copy of saved weights)."""

    name: str
    optimizer: str
    steps: int
    back: int
    moved: int


@dataclass(frozen=True)
class Uphill:
    """The first step of ``optimizer`` (its state empty for these parameters: no momentum
    yet) moved ``along`` of the ``read`` sampled entries in the direction of the gradient it
    read (plus its group's L2 ``weight_decay`` times the weights; a decoupled decay's shrink,
    AdamW's, taken out of the move), not against it; ``names``:
    the parameters with such entries."""

    optimizer: str
    along: int
    read: int
    names: tuple[str, ...]
    first_order: float = 0.0  # sum of move * grad over the sampled entries read
    descent: float = 0.0  # sum of |move| * |grad| over them: -descent is the best descent


# state keys of a first moment (momentum): with one, a step may move along the gradient
_MOMENTS = ("exp_avg", "momentum_buffer", "momentum", "m", "buf", "mu", "exp_avg_m")


def _fresh(state: Any, seen: int) -> bool:
    """Whether the optimizer's first step seen (``seen == 0``) starts from ``state`` (a
    parameter's) with no past gradient to follow: the state is empty, or holds no momentum (a
    curvature estimate written before the first step, as Sophia's ``update_hessian``).  Read
    at the first step only: one more sample per parameter, once per optimizer."""
    return not seen and (not state or (isinstance(state, dict)
                                       and not any(k in state for k in _MOMENTS)))


def _number(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError, RuntimeError):
        return None


class _Plan(NamedTuple):
    """How the parameters one optimizer's step reads are stacked while they stay the same
    tensors in the same storages: per ``(dtype, device)``, the rows (positions in the step's
    entries) and the stacked masks of positions read once; ``where[i]``: entry ``i``'s group
    and row."""

    sig: tuple[tuple[int, int], ...]  # (id, data_ptr) of each entry
    groups: dict[Any, tuple[list[int], torch.Tensor]]
    where: list[tuple[Any, int]]


class StepMoves:
    """The entries read around each optimizer step (:meth:`before`, :meth:`after`) and the
    parameters the last step holding them left unchanged (:attr:`unmoved`, by name)."""

    def __init__(self) -> None:
        # id(optimizer) -> the parameters read before its step: (p, name, lr, initial_lr, idx),
        # how they are read (_Plan), the samples read, stacked per dtype and device
        self._read: dict[int, tuple[list[tuple[Any, ...]], _Plan, dict[Any, torch.Tensor]]] = {}
        self._spaced: dict[tuple[int, Any], torch.Tensor] = {}  # (numel, device) -> positions
        self._first: dict[tuple[int, Any], torch.Tensor] = {}  # -> not a repeated position
        # id(p) -> (data_ptr, numel, type, positions or None: not sampled) of a parameter read
        self._meta: dict[int, tuple[int, int, type, torch.Tensor | None]] = {}
        # optimizer -> its last _Plan (by a weak reference: ids of dead optimizers are reused)
        self._plans: weakref.WeakKeyDictionary[Any, _Plan] = weakref.WeakKeyDictionary()
        self.unmoved: dict[str, Unmoved] = {}
        # id(optimizer) -> (parameters left unchanged, parameters read, sampled entries left
        # unchanged, sampled entries read) at its last step (entries: 0, 0 when every
        # parameter moved in most of its sample, not counted)
        self.last: dict[int, tuple[int, int, int, int]] = {}
        # id(optimizer) -> its class, from the start of its step to its end: left there when
        # the step raised (its post-hook never ran)
        self.unfinished: dict[int, str] = {}
        # id(p) -> (data_ptr, the sample, positions, the sample before) of the last step
        self._left: dict[int, tuple[int, torch.Tensor, torch.Tensor, torch.Tensor]] = {}
        self.swapped: dict[str, Swapped] = {}  # by name: storage replaced between steps
        self.reverted: dict[str, Reverted] = {}  # by name: the last update undone in place
        self.steps: dict[int, int] = {}  # id(optimizer) -> its steps that ended
        # id(optimizer) -> (entry, .grad + L2 weight decay sampled, lr * decoupled decay) of
        # its first step's parameters
        self._fresh: dict[int, list[tuple[int, torch.Tensor, float]]] = {}
        self.uphill: dict[int, Uphill] = {}  # id(optimizer) -> its first step, uphill
        # id(optimizer) -> ((id, data_ptr) of each parameter read, {(dtype, device): (rows,
        # samples before, after, positions once each)}) of its last step
        self._stacks: dict[int, tuple[tuple[Any, ...], dict[Any, Any]]] = {}
        # id(optimizer) -> ((id, data_ptr) of each, where each is in the stacks, the stacks,
        # positions) of its last step's parameters, not yet written to _left (in the order
        # the steps ended)
        self._pending: dict[int, tuple[Any, ...]] = {}

    def _positions(self, n: int, device: Any) -> torch.Tensor:
        """:data:`SAMPLE` positions spread over ``n`` entries (repeated when ``n`` is smaller:
        every parameter's sample has the same length, so a step's samples stack)."""
        idx = self._spaced.get((n, device))
        if idx is None:
            idx = torch.linspace(0, n - 1, SAMPLE).round().long().to(device)
            self._spaced[n, device] = idx
            first = torch.ones(SAMPLE, dtype=torch.bool, device=device)
            first[1:] = idx[1:] != idx[:-1]  # a position repeated counts once
            self._first[n, device] = first
        return idx

    def _plan(self, optimizer: Any, sig: tuple[tuple[int, int], ...],
              entries: list[tuple[Any, ...]]) -> _Plan:
        """``optimizer``'s last plan when it read the same parameters in the same storages,
        else a new one (kept while the optimizer lives, when it can be referred to weakly)."""
        try:
            plan = self._plans.get(optimizer)
        except TypeError:  # an object that takes no weak reference: planned at every step
            plan = None
        if plan is not None and plan.sig == sig:
            return plan
        groups: dict[Any, tuple[list[int], list[torch.Tensor]]] = {}
        where = []
        for i, (p, *_) in enumerate(entries):
            rows, firsts = groups.setdefault((p.dtype, p.device), ([], []))
            where.append(((p.dtype, p.device), len(rows)))
            rows.append(i)
            firsts.append(self._first[p.numel(), p.device])
        plan = _Plan(sig, {k: (rows, torch.stack(firsts)) for k, (rows, firsts) in groups.items()},
                     where)
        with contextlib.suppress(TypeError):
            self._plans[optimizer] = plan
        return plan

    @staticmethod
    def _sample(plan: _Plan, entries: list[tuple[Any, ...]]) -> dict[Any, torch.Tensor]:
        """The sampled entries of every parameter now, stacked per group."""
        return {k: torch.stack([torch.take(entries[i][0], entries[i][4]) for i in rows])
                for k, (rows, _) in plan.groups.items()}

    @staticmethod
    def _rows(plan: _Plan, stacked: dict[Any, torch.Tensor]) -> list[torch.Tensor]:
        """Each entry's sample, from the stacks (for the paths that read them one by one)."""
        return [stacked[k][r] for k, r in plan.where]

    def before(self, optimizer: Any, held: list[Any], names: Any) -> None:
        """``optimizer``'s step is about to run; ``held``: the watched parameters it holds,
        ``names[p]``: a parameter's ``(name, ...)``.  One ``torch.take`` per parameter,
        stacked per dtype and device (:class:`_Plan`).

        When the parameters read are those the last step of this optimizer read, in the same
        storage (``data_ptr``), what that step left is compared from its stacked samples
        (:meth:`_undone_stacked`); otherwise parameter by parameter (:meth:`_undone`, and
        :attr:`swapped` where the storage was replaced)."""
        oid = id(optimizer)
        self.unfinished[oid] = type(optimizer).__name__
        kept = {id(p) for p in held}
        entries: list[tuple[Any, ...]] = []
        sig, wanted = [], []
        seen = self.steps.get(oid, 0)
        state = {} if seen else getattr(optimizer, "state", {})
        meta = self._meta
        for group in optimizer.param_groups:
            lr, initial = _number(group.get("lr")), _number(group.get("initial_lr"))
            decay = _number(group.get("weight_decay")) or 0.0
            first_step = not seen and not group.get("maximize")
            for p in group["params"]:
                if id(p) not in kept:
                    continue
                g = p.grad
                if g is None or type(p) not in _PLAIN or p.layout is not torch.strided \
                        or not plain(g):
                    continue  # (a DTensor, a sparse tensor: no data_ptr to read)
                # whether p can be sampled, and where: read again when its storage changes
                ptr, n = p.data_ptr(), p.numel()
                known = meta.get(id(p))
                if known is None or known[0] != ptr or known[1] != n or known[2] is not type(p):
                    known = meta[id(p)] = (ptr, n, type(p), self._positions(n, p.device)
                                           if n and plain(p) else None)
                idx = known[3]
                if idx is None:
                    continue
                if first_step and _fresh(state.get(p), seen):
                    # L2 decay joins the gradient; decoupled decay (AdamW) is a move of its
                    # own, -lr * decay * p, taken out of the move before comparing
                    apart = bool(group.get("decoupled_weight_decay"))
                    wanted.append((len(entries), g, 0.0 if apart else decay,
                                   (lr or 0.0) * decay if apart else 0.0))
                entries.append((p, names[p][0], lr, initial, idx))
                sig.append((id(p), ptr))
        with torch.no_grad():
            plan = self._plan(optimizer, tuple(sig), entries)
            stacked = self._sample(plan, entries)
            fresh = []
            for i, g, decay, shrink in wanted:
                key, row = plan.where[i]
                fresh.append((i, torch.take(g, entries[i][4]) + decay * stacked[key][row],
                              shrink))
            last = self._stacks.get(oid)
            if last is not None and last[0] == plan.sig:
                self._undone_stacked(optimizer, entries, stacked, last[1])
            else:
                self._each(optimizer, entries, self._rows(plan, stacked))
        self._read[oid] = (entries, plan, stacked)
        self._fresh[oid] = fresh

    def _each(self, optimizer: Any, entries: list[tuple[Any, ...]],
              values: list[torch.Tensor]) -> None:
        """What the last step left, parameter by parameter: replaced storage
        (:attr:`swapped`) and undone updates (:meth:`_undone`)."""
        self._materialize()
        undo = []
        for (p, name, *_, idx), value in zip(entries, values, strict=True):
            left = self._left.get(id(p))
            if left is None or left[2] is not idx:
                continue
            if left[0] == p.data_ptr():
                undo.append((name, p, left, value))
                continue
            first = self._first[p.numel(), p.device]  # positions once each
            differ = int(((left[1] != value) & first).sum())
            read = int(first.sum())
            if differ * 2 > read:
                self.swapped[name] = Swapped(name, type(optimizer).__name__,
                                             self.steps.get(id(optimizer), 0), differ, read)
        self._undone(optimizer, undo)

    def _materialize(self) -> None:
        """Each parameter's sample left by the last step that read it (:attr:`_left`), from
        the stacked samples the steps since kept (written only when read)."""
        for sig, where, stacks, places in self._pending.values():
            for (key, ptr), (k, r), idx in zip(sig, where, places, strict=True):
                _, was, now, _ = stacks[k]
                self._left[key] = (ptr, now[r], idx, was[r])
        self._pending.clear()

    def _undone_stacked(self, optimizer: Any, entries: list[tuple[Any, ...]],
                        stacked: dict[Any, torch.Tensor],
                        groups: dict[Any, tuple[Any, ...]]) -> None:
        """:meth:`_undone` for the parameters the last step of ``optimizer`` read, in the same
        storage: its samples before and after, stacked per dtype and device, against the
        samples now (``stacked``, the same groups)."""
        for key, (rows, was, now, first) in groups.items():
            cur = stacked[key]
            if torch.equal(cur, now):  # the common case, one operation: nothing put back
                if self.reverted:  # some named at an earlier step: not named again
                    for i in rows:
                        self.reverted.pop(entries[i][1], None)
                continue
            moved = (was != now) & first
            ks, backs = torch.stack((moved, moved & (cur == was))).sum(2).tolist()
            hits = [(i, k, back) for i, k, back in zip(rows, ks, backs, strict=True)
                    if k and back * 2 > k]  # the common case: none, one pass over the rows
            if self.reverted:  # some named at an earlier step: dropped unless named again
                again = {i for i, _, _ in hits}
                for i in rows:
                    if i not in again:
                        self.reverted.pop(entries[i][1], None)
            for i, k, back in hits:
                name = entries[i][1]
                self.reverted[name] = Reverted(name, type(optimizer).__name__,
                                               self.steps.get(id(optimizer), 0), back, k)

    def _undone(self, optimizer: Any, undo: list[tuple[str, Any, Any, torch.Tensor]]) -> None:
        """For each ``(name, p, left, now)``: whether most sampled entries the last step
        changed are back, in place, to their values before it (:attr:`reverted`); the
        samples of one dtype and device are compared at once."""
        groups: dict[Any, list[tuple[str, Any, Any, torch.Tensor]]] = {}
        for item in undo:
            groups.setdefault((item[3].dtype, item[3].device), []).append(item)
        for items in groups.values():
            before = torch.stack([left[3] for _, _, left, _ in items])
            after = torch.stack([left[1] for _, _, left, _ in items])
            now = torch.stack([t for *_, t in items])
            first = torch.stack([self._first[p.numel(), p.device] for _, p, _, _ in items])
            moved = (before != after) & first
            ks, backs = moved.sum(1).tolist(), (moved & (now == before)).sum(1).tolist()
            for (name, *_), k, back in zip(items, ks, backs, strict=True):
                if k and back * 2 > k:
                    self.reverted[name] = Reverted(name, type(optimizer).__name__,
                                                   self.steps.get(id(optimizer), 0), back, k)
                else:
                    self.reverted.pop(name, None)


    def _keep(self, oid: int, entries: list[tuple[Any, ...]], plan: _Plan, ptrs: list[int],
              stacks: dict[Any, Any]) -> None:
        """What ``oid``'s step left, for the next step: its stacks (for
        :meth:`_undone_stacked`, dropped for the other optimizers that read one of these
        parameters: their last samples are no longer what is there) and, for
        :meth:`_materialize`, where each parameter's samples are (the latest step last)."""
        sig = plan.sig
        if any(ptr != was for ptr, (_, was) in zip(ptrs, sig, strict=True)):
            sig = tuple((i, ptr) for (i, _), ptr in zip(sig, ptrs, strict=True))
        if len(self._stacks) > (oid in self._stacks):  # another optimizer's stacks
            ids = {i for i, _ in sig}
            for other in [o for o, kept in self._stacks.items()
                          if o != oid and not ids.isdisjoint(i for i, _ in kept[0])]:
                del self._stacks[other]
        self._stacks[oid] = (sig, stacks)
        self._pending.pop(oid, None)  # ids, not the parameters: the watch keeps none alive
        self._pending[oid] = (sig, plan.where, stacks, [e[4] for e in entries])

    def _uphill(self, optimizer: Any, entries: list[tuple[Any, ...]],
                values: list[torch.Tensor], now: list[torch.Tensor]) -> None:
        """At ``optimizer``'s first step for some parameters: how many of their sampled
        entries moved along the gradient read (:attr:`uphill`)."""
        along = read = 0
        dot = size = 0.0
        names = []
        for i, g, shrink in self._fresh.pop(id(optimizer), []):
            p = entries[i][0]
            first = self._first[p.numel(), p.device] & (g != 0) & torch.isfinite(g)
            move = now[i] - values[i] * (1 - shrink)  # without a decoupled decay's shrink
            # first-order change of a real loss: Re(conj(g) * move) for a complex entry
            along_g = (move * g.conj()).real if move.is_complex() else move * g
            up = int(((along_g > 0) & first).sum())
            dot += float(along_g[first].sum())
            size += float(along_g.abs()[first].sum())
            along, read = along + up, read + int(first.sum())
            if up:
                names.append(entries[i][1])
        if read:
            self.uphill[id(optimizer)] = Uphill(type(optimizer).__name__, along, read,
                                                tuple(names), dot, size)

    def after(self, optimizer: Any) -> None:
        """``optimizer``'s step ran: each parameter read before it is named in
        :attr:`unmoved` when at least half of its sampled entries whose ``.grad`` is not
        negligible are unchanged, and dropped from it otherwise.  The samples are stacked
        and compared at once (per dtype); ``.grad`` is read only when some sample is at
        least half unchanged.  The stacks are kept for the next step's :meth:`before`."""
        oid = id(optimizer)
        self.unfinished.pop(oid, None)
        taken = self._read.pop(oid, None)
        if taken is None or not taken[0]:
            self._fresh.pop(oid, None)
            return
        entries, plan, stacked = taken
        kind = type(optimizer).__name__
        self.steps[oid] = self.steps.get(oid, 0) + 1
        with torch.no_grad():
            ptrs = [p.data_ptr() for p, *_ in entries]
            now = self._sample(plan, entries)
            if self._fresh.get(oid):
                self._uphill(optimizer, entries, self._rows(plan, stacked),
                             self._rows(plan, now))
            else:
                self._fresh.pop(oid, None)
            stacks = {k: (rows, stacked[k], now[k], first)
                      for k, (rows, first) in plan.groups.items()}
            self._keep(oid, entries, plan, ptrs, stacks)
            eqs = {k: was == cur for k, (_, was, cur, _) in stacks.items()}
            if max(int(e.sum(1).max()) for e in eqs.values()) * 2 < SAMPLE:
                if self.unmoved:  # every parameter moved in most of its sample
                    for _, name, *_ in entries:
                        self.unmoved.pop(name, None)
                self.last[oid] = (0, len(entries), 0, 0)
                return
            grads = {}
            for k, (rows, *_) in stacks.items():
                gs = torch.stack([torch.take(entries[i][0].grad, entries[i][4]) for i in rows])
                grads[k] = gs.abs().float().nan_to_num_(nan=0.0, posinf=0.0)  # non-finite: 0
            top = max(float(g.max()) for g in grads.values())
            counts: dict[int, tuple[int, int, float]] = {}
            for k, (rows, _, _, first) in stacks.items():
                # entries whose gradient is not negligible: a gradient at rounding level next
                # to the step's largest (a bias before a normalisation) is not the step's doing
                mask = (grads[k] > NEGLIGIBLE * top) & first
                sums = torch.stack((mask, eqs[k] & mask)).sum(2).tolist()  # one read
                counted = zip(sums[0], sums[1], grads[k].max(1).values.tolist(), strict=True)
                counts.update(zip(rows, counted, strict=True))
        stuck, read_any, same_all, read_all = 0, 0, 0, 0
        for i, (p, name, lr, initial, _) in enumerate(entries):
            read, same, largest = counts[i]
            if not read:
                self.unmoved.pop(name, None)
                continue
            read_any, same_all, read_all = read_any + 1, same_all + same, read_all + read
            if same >= UNMOVED * read:
                self.unmoved[name] = Unmoved(name, kind, same, read, p.dtype, lr, initial,
                                             largest)
                stuck += 1
            else:
                self.unmoved.pop(name, None)
        self.last[id(optimizer)] = (stuck, read_any, same_all, read_all)
