"""A sigmoid gate saturated in every entry: a ``sigmoid`` whose output multiplies another
branch (a highway or gated residual's transform gate, a squeeze-and-excitation scale) and is
within a hair of 0 or 1 everywhere, where its derivative ``p (1 - p)`` is almost 0: the
parameters that compute the gate get almost no gradient through it, and a gate closed at 0
passes almost nothing of the branch it multiplies, so that branch barely trains either; every
gradient is finite and nonzero.  A gate bias initialised far from 0 does this (highway
networks start the transform gate's bias at about -1 to -3).

Read at the ``backward()`` call from the loss's first nodes (before the backward frees what
they saved): a ``SigmoidBackward0`` reached from a ``MulBackward0``, its saved output.  A
sigmoid at the model's output (a classifier's probabilities) is not a gate and not read.

Imports :mod:`.finding` and ``trace.graph.nodes``' ``saved_value`` only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import torch

from ..graph.nodes import saved_value
from .finding import Finding, Options

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = ["FLAT", "STARTS", "Saturated", "saturated", "saturated_gate"]

FLAT = 1e-4
"""A gate whose derivative ``p (1 - p)`` is at most this in every entry is saturated."""


class Saturated(NamedTuple):
    """``gates`` saturated sigmoid gates (of the ``read`` reached from a product), the first
    of ``shape``: their outputs between ``low`` and ``high``, their largest derivative
    ``slope``."""

    gates: int
    read: int
    shape: tuple[int, ...]
    low: float
    high: float
    slope: float


# the node classes its scan starts from: with none of them in the nodes given, it finds nothing
STARTS = frozenset({"MulBackward0"})


def saturated(walked: list[Any]) -> Saturated | None:
    """The sigmoid gates among ``walked`` (a loss's first autograd nodes) saturated in every
    entry; ``None``: none."""
    seen: set[Any] = set()
    found: list[tuple[tuple[int, ...], float, float, float]] = []
    for n in walked:
        if type(n).__name__ != "MulBackward0":
            continue
        for child, _ in n.next_functions:
            if child is None or type(child).__name__ != "SigmoidBackward0" or child in seen:
                continue
            seen.add(child)
            p = saved_value(child, "_saved_result", hooked=False)
            if not isinstance(p, torch.Tensor) or p.numel() < 2 or not p.is_floating_point():
                continue
            p = p.detach().float()
            slope = float((p * (1 - p)).max())
            if slope <= FLAT:
                found.append((tuple(p.shape), float(p.min()), float(p.max()), slope))
    if not found:
        return None
    return Saturated(len(found), len(seen), found[0][0], min(f[1] for f in found),
                     max(f[2] for f in found), max(f[3] for f in found))


def saturated_gate(w: GradWatch, o: Options) -> Finding:
    """The saturated gates of the last ``backward()``, in words."""
    s = w.grads.losses.gates
    if s is None:
        return Finding("saturated gates", True)
    side = (f"closed: all within {s.high:.1g} of 0" if s.high < 0.5 else
            f"open: all within {1 - s.low:.1g} of 1" if s.low > 0.5 else
            "at 0 or 1 in every entry")
    passes = (", and a closed gate passes almost nothing of the branch it multiplies, so that "
              "branch's parameters barely train either" if s.high < 0.5 else "")
    return Finding("saturated gates", True, (
        f"{s.gates} of the {s.read} sigmoid gate(s) that multiply another branch are saturated "
        f"in every entry (the first of shape {tuple(s.shape)}, {side}; observed: their saved "
        f"outputs at the backward() call): the derivative p (1 - p) is at most {s.slope:.1g} "
        f"there, so the parameters that compute the gate get at most that fraction of the "
        f"gradient arriving at it{passes}; a gate bias initialised far from 0 does this "
        f"(highway networks start the transform gate's bias at about -1 to -3)"))
