"""A ``ReduceLROnPlateau`` whose metric never improved: it cut its optimizer's learning rate
at every chance its ``patience`` and ``cooldown`` gave.

``torch.optim.lr_scheduler.ReduceLROnPlateau`` counts an epoch as bad when the metric given to
``step(metrics)`` does not improve on its best (falls, in ``mode='min'``; rises, in
``mode='max'``), and cuts the learning rate by ``factor`` once more than ``patience`` bad
epochs follow each other; ``cooldown`` epochs after a cut are not counted.  From the first
epoch on, a metric that never improves makes the first cut at epoch ``patience + 2`` and one
more every ``cooldown + patience + 1`` epochs (PyTorch's ``ReduceLROnPlateau.step``).  A
scheduler whose cuts (read from ``optimizer.defaults["lr"]`` against the first group's
learning rate now) reach that count, two or more, with its ``num_bad_epochs`` and
``cooldown_counter`` what that schedule leaves (together they say how long ago the last cut
was: an improvement delays a cut by one epoch or more), saw no improvement in any epoch it
counted (an improvement in a cooldown epoch changes no count).  At its floor (``min_lr``, or
a cut smaller than ``eps``) it counts on without cutting, and a bad epoch and an improvement
leave its state alike: there the epochs past the fewest that make its cuts bound the
improvements before its last cut, and the bound is what is stated.  The usual cause is a
``mode`` opposite to its metric (``mode='max'`` given a loss, which falls as training works).

The schedulers are not seen stepping (their steps are usually outside the block): when the
block ends (:class:`Plateaus`, a part of the watch), they are found once per optimizer as the
objects that refer to it (``gc.get_referrers``, tens of milliseconds), and only when the
learning rate is below the optimizer's default.

Imports :mod:`.finding` only.
"""

from __future__ import annotations

import gc
import math
import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from torch.optim.lr_scheduler import ReduceLROnPlateau

from .finding import Finding, Options

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = ["Cut", "Plateaus", "cut_epoch", "most_cuts", "plateau_cuts", "read", "schedulers"]

_FOUND: weakref.WeakKeyDictionary[Any, list[weakref.ref[Any]]] = weakref.WeakKeyDictionary()


def schedulers(optimizer: Any) -> list[ReduceLROnPlateau]:
    """The ``ReduceLROnPlateau`` schedulers of ``optimizer`` (looked up once per optimizer)."""
    found = _FOUND.get(optimizer)
    if found is None:
        found = [weakref.ref(r) for r in gc.get_referrers(optimizer)
                 if isinstance(r, ReduceLROnPlateau) and r.optimizer is optimizer]
        _FOUND[optimizer] = found
    return [s for r in found if (s := r()) is not None]


def cut_epoch(n: int, patience: int, cooldown: int) -> int:
    """The epoch of the ``n``-th cut (from 1) of a metric that never improves after the
    first: the fewest epochs that make ``n`` cuts."""
    return patience + 2 + (n - 1) * (cooldown + patience + 1)


def most_cuts(epochs: int, patience: int, cooldown: int) -> tuple[int, int, int]:
    """The cuts a ``ReduceLROnPlateau`` makes in ``epochs`` steps when its metric never
    improves after the first, and its ``num_bad_epochs`` and ``cooldown_counter`` then: the
    two together tell how many epochs ago the last cut was, so a cut delayed by an
    improvement and still in time for the same count is told apart."""
    first = patience + 2
    if epochs < first:
        return 0, epochs - 1, 0
    cuts = 1 + (epochs - first) // (cooldown + patience + 1)
    since = epochs - cut_epoch(cuts, patience, cooldown)  # epochs after the last cut
    return cuts, max(0, since - cooldown), max(0, cooldown - since)


@dataclass(frozen=True)
class Cut:
    """A ``ReduceLROnPlateau`` (``mode``, ``patience``) that cut ``optimizer``'s learning rate
    ``cuts`` times in ``epochs`` steps, from ``start`` to ``now``, its best metric ``best``."""

    optimizer: str
    mode: str
    patience: int
    cuts: int
    epochs: int
    start: float
    now: float
    best: float
    known: int  # the fewest epochs that make ``cuts`` cuts (all of them when cuts are most)
    slack: int = 0  # at most this many counted epochs improved before its last cut


def read(optimizers: Iterable[Any]) -> list[Cut]:
    """The schedulers of ``optimizers`` whose cuts reach :func:`most_cuts` (two or more)."""
    out = []
    for opt in optimizers:
        start, groups = opt.defaults.get("lr"), opt.param_groups
        if not isinstance(start, float | int) or not groups or not start > groups[0]["lr"] > 0:
            continue
        now = float(groups[0]["lr"])
        for s in schedulers(opt):
            if not 0 < s.factor < 1 or s.mode not in ("min", "max"):
                continue
            cuts = round(math.log(now / start) / math.log(s.factor))
            top, bad, cooling = most_cuts(s.last_epoch, s.patience, s.cooldown)
            # at its floor (min_lr, or a cut smaller than eps) it counts on without cutting
            floor = now * (1 - s.factor) <= s.eps or now <= float(s.min_lrs[0]) + s.eps
            exact = s.num_bad_epochs == bad and s.cooldown_counter == cooling
            if cuts < 2 or not ((cuts == top and exact)
                                or (floor and cuts < top)):
                continue
            # the fewest epochs that make this many cuts: each improvement in a counted
            # epoch delays the next cut by one epoch or more, so the epochs past that many
            # bound the improvements before the last cut; at the floor, a bad epoch and an
            # improvement both leave num_bad_epochs as after a cut: what came after is unknown
            least = cut_epoch(cuts, s.patience, s.cooldown)
            known = s.last_epoch if cuts == top else least
            out.append(Cut(type(opt).__name__, s.mode, s.patience, cuts, s.last_epoch,
                           float(start), now, float(s.best), known,
                           0 if cuts == top else s.last_epoch - least))
    return out


class Plateaus:
    """A part of the watch: the schedulers' cuts read when the block ends (:func:`read`, of
    the optimizers ``grads`` saw), while the user's schedulers are still alive."""

    def __init__(self, grads: Any) -> None:
        self._grads = grads
        self.found: list[Cut] = []

    def attach(self) -> None:
        self.found = []

    def detach(self) -> list[Any]:
        self.found = read(h.optimizer for h in self._grads.seen_optimizers)
        return []


def _improved(c: Cut) -> str:
    """What the cuts say about the metric's improvements."""
    if not c.slack:
        return (f"as often as its patience and cooldown allow, so its metric did not improve "
                f"({'rising' if c.mode == 'max' else 'falling'} past its best, {c.best:.4g}) "
                f"in any epoch it counted after the first")
    return (f"down to its floor (a cut below eps, or min_lr), where it cuts no more: a metric "
            f"that never improves is cut that often by epoch {c.known}, so before its last "
            f"cut the metric improved in at most {c.slack} of the epochs it counted (after "
            f"it, a bad epoch and an improvement leave the scheduler's state alike)")


def plateau_cuts(w: GradWatch, o: Options) -> Finding:
    """A ``ReduceLROnPlateau`` of an optimizer seen in the block that cut the learning rate as
    often as its ``patience`` allows: its metric never improved (a problem)."""
    if not w.plateaus.found:
        return Finding("plateau scheduler", True)
    c = w.plateaus.found[0]
    other = "min" if c.mode == "max" else "max"
    kind = "a loss, which falls" if c.mode == "max" else "an accuracy, which rises"
    return Finding("plateau scheduler", True, (
        f"ReduceLROnPlateau(mode='{c.mode}', patience={c.patience}) cut the learning rate of "
        f"{c.optimizer} {c.cuts} times in {c.epochs} epochs, {c.start:g} -> {c.now:g} "
        f"(observed at the block's end: optimizer.defaults' lr against its group's now), "
        f"{_improved(c)}; given {kind} as training works, mode='{c.mode}' counts every epoch "
        f"as bad: pass mode='{other}' for it")
    )
