"""A parameter clamped in the forward past its bound: ``p.clamp(max=b)`` with ``p > b``.

``clamp``'s derivative is 0 where its input is outside ``[min, max]``
(https://docs.pytorch.org/docs/stable/generated/torch.clamp.html): a parameter that enters
the loss only through a clamp it has passed gets an exactly zero gradient, and, its gradient
being zero, no step brings it back (a learnable temperature or logit scale clamped in the
forward, as CLIP's ``logit_scale`` must not be: OpenCLIP clamps it in place after the step).

Seen here, at each outermost ``backward()``: a ``clamp`` node among the loss's first nodes
whose input is a parameter (its next node an ``AccumulateGrad``) and whose saved input is
outside its bounds at every entry.

Read by :class:`.lossnodes.LossNodes` (:data:`NODE`, :func:`read`); said by
:mod:`.zerocauses` (:func:`said`).  Imports ``trace.graph`` only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import torch

from ..graph.nodes import saved_value

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = ["NODE", "Clamped", "read", "said"]

NODE = "ClampBackward1"
"""The node read: ``clamp`` with number bounds (its saved input and bounds)."""


class Clamped(NamedTuple):
    """Parameter ``param`` (its ``id``) of value ``value`` (its largest entry past ``max``,
    or its smallest below ``min``) entered the loss through ``clamp`` with ``bound``."""

    param: int
    bound: str
    value: float


def read(node: Any) -> Clamped | None:
    nexts = [c for c, _ in node.next_functions if c is not None]
    if len(nexts) != 1 or not isinstance(p := getattr(nexts[0], "variable", None), torch.Tensor):
        return None
    x = saved_value(node, "_saved_self", hooked=False)
    lo = saved_value(node, "_saved_min", hooked=False)
    hi = saved_value(node, "_saved_max", hooked=False)
    if not isinstance(x, torch.Tensor) or not x.numel() or (lo is None and hi is None):
        return None
    x = x.detach()
    above = (x > hi) if hi is not None else torch.zeros_like(x, dtype=torch.bool)
    below = (x < lo) if lo is not None else torch.zeros_like(x, dtype=torch.bool)
    if not bool((above | below).all()):
        return None
    if bool(above.any()):
        return Clamped(id(p), f"max={hi:.4g}", float(x.max()))
    return Clamped(id(p), f"min={lo:.4g}", float(x.min()))


def said(w: GradWatch, names: list[str]) -> str:
    """``" (observed: ...)"`` when one of ``names`` is the clamped parameter the last
    ``backward()`` read; else ``""``."""
    c = w.lossnodes.found.get("clamped")
    if c is None:
        return ""
    name = next((n for p, (n, _) in w.watched.owner.items() if id(p) == c.param), None)
    if name not in names:
        return ""
    return (f" ({name} enters the loss through clamp({c.bound}) and its value, {c.value:.4g}, "
            f"is past that bound at every entry (observed: the clamp's saved input): clamp's "
            f"derivative is 0 there, so it gets no gradient and no step brings it back; clamp "
            f"it in place after the optimizer step (with torch.no_grad(): p.clamp_(...)) "
            f"instead of in the forward)")
