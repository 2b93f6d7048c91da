"""A state that a loop multiplies, step after step, by factors above 1 in magnitude: where the
forward's first NaN/Inf is made inside such a recurrence (a state-space scan
``h = a_t * h + b_t`` whose decay ``a_t = exp(Δ·A)`` is above 1 when ``Δ·A > 0``), the state
grows geometrically and overflows its dtype after a few steps.  Read from the saved operands
of the recurrence's products, walked back from the node that made the first NaN/Inf.

Imports ``trace.graph`` only.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import torch

from ..graph.nodes import children, node_class, op_name, saved_value
from ..graph.operators import described as _described
from ..graph.operators import row

__all__ = ["Recurrence", "described", "recurrence"]

MIN_STEPS = 2  # steps of the same product (the same node classes) make a recurrence
_LIMIT = 100_000  # steps walked back at most


class Recurrence(NamedTuple):
    """``steps`` products of the same loop, earliest first: the largest magnitude of a factor
    (``factor``) and of the state before and after the walk (``start``, ``end``), how many
    steps had a factor above 1 (``growing``), the state's dtype, and ``exp``: for factors made
    by ``exp``, how many of their entries exceed 1 (a positive exponent) of how many."""

    steps: int
    factor: float
    growing: int
    start: float
    end: float
    dtype: torch.dtype
    exp: tuple[int, int] | None


def _step(node: Any) -> tuple[Any, torch.Tensor, torch.Tensor] | None:
    """One step back: a product at ``node`` or just below it that multiplies a state made by a
    node of ``node``'s own class (the previous step) by a factor: ``(that node, state,
    factor)``."""
    kind = node_class(node)
    for n in [node, *(c for c, _ in children(node) if c is not None)]:
        attrs = row(op_name(n)).operands
        if not row(op_name(n)).product or len(attrs) != 2:
            continue
        vals = [v for a in attrs if isinstance(v := saved_value(n, a, hooked=False),
                                                torch.Tensor) and v.is_floating_point()]
        if len(vals) != 2:
            continue
        for i in (0, 1):
            state, factor = vals[i], vals[1 - i]
            if state.grad_fn is not None and node_class(state.grad_fn) == kind:
                return state.grad_fn, state, factor
    return None


def _exp_source(factor: torch.Tensor) -> tuple[int, int] | None:
    """When ``factor`` is (a view of) an ``exp``'s result: its entries above 1, of all."""
    n = factor.grad_fn
    for _ in range(4):
        if n is None:
            return None
        if op_name(n) == "exp":
            r = saved_value(n, "_saved_result", hooked=False)
            return (int((r > 1).sum()), r.numel()) if isinstance(r, torch.Tensor) else None
        nxt = children(n)
        n = nxt[0][0] if nxt else None
    return None


def recurrence(node: Any) -> Recurrence | None:
    """The recurrence ending at ``node`` whose state grew (a factor above 1 and a state larger
    at the end than at the start), or ``None``: fewer than :data:`MIN_STEPS` steps, or no
    growth."""
    seen: list[tuple[torch.Tensor, torch.Tensor]] = []
    n: Any = node
    exp = None
    while n is not None and len(seen) < _LIMIT:
        got = _step(n)
        if got is None:
            break
        n, state, factor = got
        if not seen:  # the last step's factor, where the state overflowed
            exp = _exp_source(factor)
        seen.append((state.detach(), factor.detach()))
    if len(seen) < MIN_STEPS:
        return None
    seen.reverse()
    big = [float(f.abs().max()) for _, f in seen]
    size = [float(s.abs().max()) for s, _ in seen]
    if max(big) <= 1 or not size[-1] > size[0]:
        return None
    return Recurrence(len(seen), max(big), sum(b > 1 for b in big), size[0], size[-1],
                      seen[-1][0].dtype, exp)


def described(node: Any) -> tuple[str, str]:
    """:func:`~gradarg.trace.graph.operators.described`, and, when ``node`` ends a recurrence
    whose state grew (:func:`recurrence`), that recurrence in words."""
    op, where = _described(node)
    if (r := recurrence(node)) is None:
        return op, where
    big = torch.finfo(r.dtype).max
    exp = "" if r.exp is None else (
        f"; the factors are exp(·) of an exponent positive in {r.exp[0]} of {r.exp[1]} "
        f"entries (a decay exp(Δ·A) stays below 1 only while Δ·A < 0)")
    return op, (f"inside a recurrence that multiplied its state {r.steps} times before, by "
                f"factors up to {r.factor:.3g} in magnitude (above 1 at {r.growing} of those "
                f"steps): the state grew from {r.start:.3g} to {r.end:.3g} and overflows "
                f"{str(r.dtype).removeprefix('torch.')} (largest {big:.3g}){exp}"
                + (f"; {where}" if where else ""))
