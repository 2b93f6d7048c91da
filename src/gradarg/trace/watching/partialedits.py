"""``.grad`` scaled between two backward passes that accumulate into it, read from each
parameter's observed ``.grad`` events (:class:`.events.Note`: a pass's ``held`` is the norm
``.grad`` had when the pass began, the previous pass's ``after`` the norm it left).  One
factor below 1 for every parameter at the same point is ``clip_grad_norm_`` called inside an
accumulation loop: it clips each partial sum, so the gradient the step reads is neither the
sum of the micro-batches' gradients nor that sum clipped (PyTorch's AMP examples clip once,
after the last backward of the accumulation).

Imports nothing of the trace room.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["scaled_between_passes"]

SAME = 1e-3  # relative spread of the factors read as one factor


def scaled_between_passes(records: Iterable[Any]) -> tuple[int, int, list[float]] | None:
    """For records with ``.events`` (:class:`.records.ParamRecord`): ``(edited, passes,
    factors)`` when, between consecutive passes of one step, every parameter's ``.grad`` was
    scaled by one factor below 1 at ``edited`` of the ``passes - 1`` points; ``None`` when
    at no point, or the parameters' factors differ."""
    per: list[dict[int, float]] = []
    passes = 0
    for r in records:
        notes: Sequence[Any] = [n for n in r.events if n.kind == "pass"]
        passes = max(passes, len(notes))
        factors = {}
        for i in range(1, len(notes)):
            a, b = notes[i - 1], notes[i]
            if b.step == a.step and a.measured and b.measured and b.held is not None and a.after:
                factors[i] = b.held / a.after
        per.append(factors)
    if not per:
        return None
    points = sorted(set.intersection(*(set(f) for f in per)))
    edited = []
    for i in points:
        fs = [f[i] for f in per]
        if max(fs) < 1 - SAME and max(fs) <= min(fs) * (1 + SAME):
            edited.append(fs[0])
    return (len(edited), passes, edited) if edited else None
