"""What an optimizer step reads, compared with what the backward passes left, cheaply: the
``.grad`` norms of two parameters (the probes) stand for all of them.

At each step the norm of ``.grad`` of the smallest trainable parameter and of the parameter
whose last pass left the largest ``.grad`` are compared with the norms their passes left
(scaled by a ``GradScaler``'s ``unscale_`` where one ran).  Unchanged, the others are taken as
their passes left them; changed, every norm is read.  The smallest catches an edit of every
``.grad`` (a clip of the total norm, a scale, an edit); the largest catches a clip of each
tensor alone, which leaves every tensor below the threshold, the smallest among them,
unchanged (``clip_grad_norm_`` called per parameter).  A ``.grad`` reset is seen by its
``None``-ness, not here.  Imports :mod:`gradarg.trace.graph.values` only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from ..graph.values import norm as _norm

__all__ = ["GradProbes"]


def _same(now: float, then: float) -> bool:
    return now == then or abs(now / then - 1) <= 1e-5


class GradProbes:
    """The two probes of one watch: ``probe`` (the smallest trainable parameter, or
    ``None``), and the largest as the passes leave them."""

    def __init__(self, probe: torch.Tensor | None) -> None:
        self.probe = probe
        self.after: float | None = None  # the probe's .grad norm its last pass left
        self._top: tuple[Any, float] | None = None  # the largest one's, and that parameter

    def accumulated(self, p: torch.Tensor, after: float | None) -> None:
        """A pass left ``.grad`` of ``p`` with norm ``after`` (``None``: not read)."""
        if p is self.probe:
            self.after = after
        top = self._top
        if after is not None and (top is None or top[0] is p or after > top[1]):
            self._top = (p, after)

    def unscaled(self, held: Sequence[torch.Tensor], has_probe: bool, factor: float) -> None:
        """``GradScaler.unscale_`` multiplied the ``.grad`` of ``held`` by ``factor``."""
        if has_probe and self.after is not None:
            self.after *= factor
        if (top := self._top) is not None and any(q is top[0] for q in held):
            self._top = (top[0], top[1] * factor)

    def read(self, held: Sequence[torch.Tensor], grads: Sequence[torch.Tensor | None],
             has_probe: bool) -> dict[Any, float] | None:
        """At a step holding ``held`` (their ``.grad``: ``grads``): the probes' norms, or every
        norm when a probe's differs from what its pass left; ``None`` when the smallest probe
        cannot be compared (then the caller reads what it can).  Each probe is compared once."""
        probe, a = self.probe, self.after
        if probe is None or not a or probe.grad is None or not has_probe:
            return None
        norms = {probe: _norm(probe.grad)}
        changed = not _same(norms[probe], a)
        top = self._top
        if top and top[1] and top[0].grad is not None and any(q is top[0] for q in held):
            norms[top[0]] = m = _norm(top[0].grad)
            changed = changed or not _same(m, top[1])
            self._top = None
        if changed:
            norms = {p: _norm(g) for p, g in zip(held, grads, strict=True) if g is not None}
        return norms

    def compared(self) -> None:
        """The step that held the smallest probe read it: a later one has nothing to compare."""
        self.after = None
