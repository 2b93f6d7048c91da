"""Learning-rate schedulers' steps against their optimizers' steps, observed for
:mod:`.gradhooks`: a scheduler whose first ``step()`` runs before its optimizer's first
``step()`` makes the optimizer skip the first value of the schedule (the first update already
uses the decayed learning rate).  PyTorch warns about the same order ("Detected call of
`lr_scheduler.step()` before `optimizer.step()`", ``torch.optim.lr_scheduler.LRScheduler.step``);
the warning is often filtered, and the order is seen here from the calls themselves.

A scheduler's step is seen through a wrapper of ``torch.optim.lr_scheduler.LRScheduler.step``
(:func:`.patches.register_scheduler_step_hook`); schedulers that override ``step`` without
calling it (``ReduceLROnPlateau``, ``CosineAnnealingWarmRestarts``) are not seen.  An optimizer
"has not stepped" when no step of it was seen in the block and its state holds no ``step``
count (plain SGD keeps no state: a step of it before the block cannot be told).

:func:`scheduler_order` says it (a finding listed in :data:`.findings.FINDINGS`).

Imports nothing of the trace room but :mod:`.patches` and :mod:`.finding`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import patches
from .finding import Finding, Options

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = ["EarlyScheduler", "ScheduleOrder", "scheduler_order", "zero_lr_cause"]


@dataclass
class EarlyScheduler:
    """A scheduler's first ``step()`` seen before its optimizer's first: the classes, the
    learning rate of the optimizer's first parameter group before and after that scheduler
    step (``lr_before``, ``lr_after``), and the one the optimizer's first step then used
    (``lr_used``, ``None`` while no step of it followed in the block)."""

    scheduler: str
    optimizer: str
    lr_before: float | None
    lr_after: float | None = None
    lr_used: float | None = None


def _lr(optimizer: Any) -> float | None:
    try:
        return float(optimizer.param_groups[0]["lr"])
    except (AttributeError, IndexError, KeyError, TypeError, ValueError, RuntimeError):
        return None


def _stepped_before(optimizer: Any) -> bool:
    """Whether ``optimizer``'s state shows a step taken (a ``step`` count in some state)."""
    try:
        return any("step" in s for s in optimizer.state.values())
    except (AttributeError, TypeError):
        return False


_SETTINGS = ("T_max", "eta_min", "T_0", "total_iters", "step_size", "gamma", "milestones",
             "start_factor", "end_factor", "total_steps", "max_lr")


def _described(scheduler: Any) -> str:
    """``"CosineAnnealingLR (T_max=1, eta_min=0) at its step 1"``: the class, the settings
    of :data:`_SETTINGS` it has, and its ``last_epoch`` (the number of its ``step()`` calls)."""
    parts = [f"{k}={getattr(scheduler, k)!r}" for k in _SETTINGS
             if isinstance(getattr(scheduler, k, None), (int, float, list))]
    shown = f" ({', '.join(parts)})" if parts else ""
    return f"{type(scheduler).__name__}{shown} at its step {getattr(scheduler, 'last_epoch', '?')}"


class ScheduleOrder:
    """The order of scheduler and optimizer steps in a block (:meth:`scheduled`,
    :meth:`stepped`); :attr:`early`: the schedulers whose first step came before their
    optimizer's first, by ``id(optimizer)``."""

    def __init__(self) -> None:
        self._stepped: set[int] = set()  # optimizers whose step was seen
        self.early: dict[int, EarlyScheduler] = {}
        self.seen = 0  # scheduler steps seen (the constructor's own first step not counted)
        # the first scheduler step after which an optimizer's learning rate was 0: the scheduler,
        # its step count and its own settings, in words
        self.zeroed: list[tuple[str, int]] = []

    def attach(self) -> list[Any]:
        """The handles of the scheduler-step wrapper's listener, for the caller to remove."""
        return [patches.register_scheduler_step_hook(self.scheduled)]

    def scheduled(self, scheduler: Any, when: str) -> None:
        """Around a scheduler's ``step()``: ``when`` is ``"before"`` or ``"after"``."""
        optimizer = getattr(scheduler, "optimizer", None)
        if optimizer is None:
            return
        key = id(optimizer)
        if when == "after":
            e = self.early.get(key)
            if e is not None and e.lr_after is None:
                e.lr_after = _lr(optimizer)
            if _lr(optimizer) == 0.0 and not self.zeroed:
                self.zeroed.append((_described(scheduler), getattr(scheduler, "last_epoch", -1)))
            return
        if getattr(scheduler, "last_epoch", -1) < 0:  # the constructor's own first step
            return
        self.seen += 1
        if (getattr(scheduler, "last_epoch", None) == 0 and key not in self._stepped
                and key not in self.early and not _stepped_before(optimizer)):
            self.early[key] = EarlyScheduler(type(scheduler).__name__,
                                             type(optimizer).__name__, _lr(optimizer))

    def stepped(self, optimizer: Any) -> None:
        """An optimizer's step begins (its step pre-hook)."""
        key = id(optimizer)
        if key in self._stepped:
            return
        self._stepped.add(key)
        e = self.early.get(key)
        if e is not None and e.lr_used is None:
            e.lr_used = _lr(optimizer)


def zero_lr_cause(order: ScheduleOrder) -> str:
    """Why the learning rate is 0, in words: the first scheduler step after which it was
    (:attr:`ScheduleOrder.zeroed`), or what usually does it when none was seen."""
    if not order.zeroed:
        return ("a warm-up or LambdaLR whose factor is 0 at step 0 does this, and its first "
                "step is then wasted")
    what, count = order.zeroed[0]
    if count <= 0:
        return (f"the scheduler set it to 0 when it was made: {what} (observed: the "
                f"optimizer's lr after its step()); a warm-up whose factor is 0 at step 0 "
                f"wastes the first step: start the factor above 0")
    return (f"a learning-rate scheduler set it to 0: {what} (observed: the optimizer's lr "
            f"right after that step()); a schedule's length (T_max, total_iters, step_size) "
            f"counts its step() calls, so one meant in epochs but stepped after every batch "
            f"reaches its end after that many batches: step it once per epoch, or give the "
            f"length in batches")


def scheduler_order(w: GradWatch, o: Options) -> Finding:
    """A learning-rate scheduler whose first ``step()`` came before its optimizer's first
    (observed: both calls, in order; :mod:`.schedules`): the optimizer skips the schedule's
    first value, its first update already using the next one."""
    early = list(w.grads.schedules.early.values())
    if not early:
        return Finding("scheduler order", True)
    e = early[0]
    then = ""
    if e.lr_before is not None and e.lr_used is not None and e.lr_used != e.lr_before:
        then = (f", so the first update used lr {e.lr_used:g} where the schedule starts at "
                f"{e.lr_before:g}")
    elif e.lr_used is None:
        then = "; no step of that optimizer followed in the block"
    return Finding("scheduler order", True, (
        f"lr_scheduler.step() ({e.scheduler}) ran before optimizer.step() ({e.optimizer}): "
        f"the scheduler's first step came before its optimizer's first step (observed: both "
        f"calls, in order){then}; the optimizer skips the schedule's first value: call "
        f"optimizer.step() first, then scheduler.step() (torch warns \"Detected call of "
        f"`lr_scheduler.step()` before `optimizer.step()`\")"))
