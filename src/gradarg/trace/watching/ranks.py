"""Which process saw what first, under ``DistributedDataParallel`` or FSDP2: one small record
per process, gathered on every process when the ``with`` block ends.

Each process records its own gradients (before the processes average them) and judges the
averaged ``.grad`` it steps with; a NaN in one process's batch reaches every process's
``.grad`` through the average.  So that every process can say where it came from, each one
sends, when its block ends, the names of the parameters whose own gradient was NaN/Inf, the
time the first of them arrived (``time.time()``: the processes of one machine share the
clock), and the names of the parameters that got no gradient of their own, with
``torch.distributed.all_gather_object`` (a collective: only when a process group is
initialised and the model is spread over more than one process; every process must leave its
block).  See https://pytorch.org/docs/stable/distributed.html#torch.distributed.all_gather_object.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import torch

__all__ = ["RankSeen", "first_nonfinite", "gather", "mine"]


class RankSeen(NamedTuple):
    """What one process saw of its own gradients in the step: its ``rank``, the parameters
    whose own gradient held NaN/Inf (``nonfinite``), when the first of them arrived
    (``first_at``, seconds since the epoch; ``None``: none did) and the parameters that
    got no gradient of their own (``missing``)."""

    rank: int
    nonfinite: list[str]
    first_at: float | None
    missing: list[str]


def mine(watched: Any, grads: Any) -> RankSeen:
    """This process's record, read from the step's passes (``grads.passes``)."""
    owner = watched.owner
    got = {e.param for e in grads.passes}
    bad = list(dict.fromkeys(owner[e.param][0] for e in grads.passes
                             if e.grad is not None and not math.isfinite(e.grad)))
    missing = [name for p, (name, _) in owner.items() if p.requires_grad and p not in got]
    return RankSeen(watched.rank, bad, grads.first_nonfinite_at if bad else None, missing)


def gather(watched: Any, grads: Any) -> list[RankSeen] | None:
    """Every process's :class:`RankSeen`, by rank, gathered from all of them (a collective);
    ``None`` without an initialised process group, without an engine that spreads the model
    (DDP, FSDP2), or with a single process."""
    dist = torch.distributed
    if (watched.engine is None or watched.world < 2 or not dist.is_available()
            or not dist.is_initialized()):
        return None
    record = tuple(mine(watched, grads))
    seen: list[Any] = [None] * watched.world
    dist.all_gather_object(seen, record)
    return [RankSeen(*s) for s in seen]


def first_nonfinite(seen: list[RankSeen]) -> RankSeen | None:
    """The process whose own gradient held NaN/Inf first (``None``: none did)."""
    bad = [s for s in seen if s.nonfinite]
    if not bad:
        return None
    return min(bad, key=lambda s: (s.first_at if s.first_at is not None else math.inf, s.rank))
