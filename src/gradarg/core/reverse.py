"""Reverse mode: the rows of a Jacobian from vector–Jacobian products with one-hot cotangents.

``fn`` is evaluated once, unbatched (:func:`~gradarg.core.graph.reverse_graph`), so it may do
anything a normal forward pass may; only the backward passes are batched, and a failed batched
attempt falls back to a loop over the same graph.  Which batched path is taken is decided by
the measured tables of :mod:`.speeds`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

import torch

from . import speeds
from .basis import Blocks, eye_blocks, split_rows, unshared, zeros_like_grad
from .functorch import VMAP_ERRORS, batched
from .graph import graph_names, reverse_graph

__all__ = ["reverse_grads_batched", "reverse_loop", "reverse_loop_graph", "reverse_vectorized"]


def _legacy_batched_grad(
    live_outs: Sequence[torch.Tensor],
    leaves: tuple[torch.Tensor, ...],
    cots: Sequence[torch.Tensor],
    create_graph: bool = False,
) -> tuple[torch.Tensor | None, ...]:
    """All VJPs in one call of ``torch.autograd.grad(..., is_grads_batched=True)``."""
    return torch.autograd.grad(
        live_outs,
        leaves,
        cots,
        retain_graph=True,
        create_graph=create_graph,
        allow_unused=True,
        is_grads_batched=True,
    )


def reverse_grads_batched(
    leaves: tuple[torch.Tensor, ...],
    outs: tuple[torch.Tensor, ...],
    *,
    create_graph: bool = False,
) -> Blocks:
    """All rows from one ``torch.autograd.grad(..., is_grads_batched=True)`` call, whatever
    the graph holds: what ``torch.autograd.functional.jacobian(vectorize=True)`` does.

    The second vectorized attempt of ``vectorize=True`` when ``torch.func.vmap`` could not batch
    the backward pass (torch's older batching rules loop per row where they have no rule,
    with torch's performance warning).  Refuses graphs with a node of
    :data:`~gradarg.core.speeds.WRONG_BATCHED_BACKWARD` (with ``create_graph`` also
    ``WRONG_BATCHED_CREATE_GRAPH``), as :func:`reverse_vectorized` does.
    """
    shapes = [y.shape for y in outs]
    m = sum(y.numel() for y in outs)
    live = [k for k, y in enumerate(outs) if y.requires_grad]
    if not live or m == 0:
        return split_rows([zeros_like_grad(x, m) for x in leaves], shapes)
    live_outs = [outs[k] for k in live]
    _refuse_wrong_batching(graph_names(live_outs), create_graph)
    cot = eye_blocks(shapes, outs, cached=True)
    return _rows_from_is_grads_batched(leaves, outs, live, cot, create_graph)


def _refuse_wrong_batching(names: AbstractSet[str], create_graph: bool) -> None:
    """Raise ``NotImplementedError`` (the callers then loop) for a graph whose nodes torch
    batches wrongly: :data:`~gradarg.core.speeds.WRONG_BATCHED_BACKWARD`, and with
    ``create_graph`` :data:`~gradarg.core.speeds.WRONG_BATCHED_CREATE_GRAPH`."""
    wrong = names & speeds.WRONG_BATCHED_BACKWARD
    if create_graph:
        wrong |= names & speeds.WRONG_BATCHED_CREATE_GRAPH
    if wrong:
        raise NotImplementedError(f"torch's batched {min(wrong)} gives wrong results (or, "
                                  f"with create_graph, wrong derivatives); use the loop")


def _rows_from_is_grads_batched(
    leaves: tuple[torch.Tensor, ...],
    outs: tuple[torch.Tensor, ...],
    live: Sequence[int],
    cot: Sequence[torch.Tensor],
    create_graph: bool = False,
) -> Blocks:
    """The rows of the outputs ``live`` (those with a graph) from one
    :func:`_legacy_batched_grad` call; an unreached input gets plain zeros."""
    m = sum(y.numel() for y in outs)
    found = _legacy_batched_grad([outs[k] for k in live], leaves, [cot[k] for k in live],
                                 create_graph)
    grads = tuple(
        zeros_like_grad(x, m) if g is None else unshared(g, cot)
        for x, g in zip(leaves, found, strict=True)
    )
    return split_rows(grads, [y.shape for y in outs])


def reverse_vectorized(
    leaves: tuple[torch.Tensor, ...],
    outs: tuple[torch.Tensor, ...],
    *,
    create_graph: bool = False,
    path: str | None = None,
) -> Blocks:
    """All rows in one batched backward pass: ``vmap`` over one-hot cotangents.

    ``torch.func.jacrev`` vmaps the VJP of ``torch.func.vjp``, which runs every backward with
    ``create_graph=True``; here the graph of an ordinary forward pass is reused with
    ``torch.autograd.grad`` (what ``torch.autograd.functional.jacobian(vectorize=True)`` does,
    but with functorch's batching rules instead of the legacy ones, which are slow for e.g.
    softmax or tanh).  Works for complex tensors too (PyTorch's conjugate convention).
    ``create_graph`` records the backward passes, so that the rows can be differentiated.

    The rule for the cheaper public path: when every backward node of the graph is in
    :data:`~gradarg.core.speeds.LEGACY_FAST_BACKWARD` (measured faster there), the result is real, ``create_graph``
    is off and there are at most :data:`~gradarg.core.speeds.LEGACY_MAX_ROWS` rows, the rows come from one
    ``torch.autograd.grad(..., is_grads_batched=True)`` call instead (what
    ``torch.autograd.functional.jacobian(vectorize=True)`` does), about 30 us less per call.
    ``path`` (``"legacy"`` or ``"func"``: a route trial's or a remembered plan's) takes that
    path instead of the table; ``"legacy"`` raises :class:`~gradarg.core.speeds.RouteUnavailable`
    where the rule's other conditions do not hold or torch refuses.
    """
    shapes = [y.shape for y in outs]
    m = sum(y.numel() for y in outs)
    live = [k for k, y in enumerate(outs) if y.requires_grad]
    if not live or m == 0:
        return split_rows([zeros_like_grad(x, m) for x in leaves], shapes)
    live_outs = [outs[k] for k in live]
    names = graph_names(live_outs)
    _refuse_wrong_batching(names, create_graph)
    if m == 1:
        # one row is one plain backward pass: nothing to batch, and with create_graph its
        # graph is the plain one, not vmap's (whose derivative can differ: torch 2.13's
        # batched det backward gives NaN second derivatives where det(x) has equal
        # singular values, as torch.func.hessian does, pytorch/pytorch#149694)
        return reverse_loop_graph(leaves, outs, create_graph=create_graph)
    cot = eye_blocks(shapes, outs, cached=True)
    eligible = (
        not create_graph
        and speeds.legacy_reverse_eligible(names, m)
        and not any(t.is_complex() for t in (*leaves, *live_outs))
    )
    if path == "legacy":
        if not eligible:
            raise speeds.RouteUnavailable(path)
        try:
            return _rows_from_is_grads_batched(leaves, outs, live, cot)
        except VMAP_ERRORS as err:
            raise speeds.RouteUnavailable(path) from err
    if path is None and eligible and speeds.USE_LEGACY_BATCHED_GRAD:
        with contextlib.suppress(*VMAP_ERRORS):  # else torch.func.vmap below
            return _rows_from_is_grads_batched(leaves, outs, live, cot)
    unused: set[int] = set()

    def vjp(*v: torch.Tensor) -> torch.Tensor | tuple[torch.Tensor, ...]:
        grads = torch.autograd.grad(
            live_outs, leaves, v, retain_graph=True, create_graph=create_graph, allow_unused=True
        )
        unused.update(j for j, g in enumerate(grads) if g is None)
        # a stand-in for an unreached input; replaced by real zeros below
        out = tuple(
            torch.zeros_like(x) if g is None else g for x, g in zip(leaves, grads, strict=True)
        )
        return out[0] if len(out) == 1 else out  # a tensor: less pytree work in vmap

    grads = batched(vjp, [cot[k] for k in live])
    # an input no output reaches: plain zeros (no autograd history, not an expanded view)
    grads = tuple(
        zeros_like_grad(x, m) if j in unused else unshared(g, cot)
        for j, (x, g) in enumerate(zip(leaves, grads, strict=True))
    )
    return split_rows(grads, shapes)


def reverse_loop(
    fn: Callable[..., Any], xs: tuple[torch.Tensor, ...], *, create_graph: bool = False
) -> tuple[Blocks, bool]:
    """One backward pass per output element, each with a one-hot ``gradient``.

    This is literally what the site teaches: ``y.backward(gradient=e_i)`` puts row ``i`` of the
    Jacobian in ``x.grad``; ``torch.autograd.grad`` computes the same without accumulating.
    """
    leaves, outs, is_tuple = reverse_graph(fn, xs, create_graph=create_graph)
    return reverse_loop_graph(leaves, outs, create_graph=create_graph), is_tuple


def reverse_loop_graph(
    leaves: tuple[torch.Tensor, ...],
    outs: tuple[torch.Tensor, ...],
    *,
    create_graph: bool = False,
) -> Blocks:
    """The loop of :func:`reverse_loop` on an already recorded graph (``retain_graph`` kept it)."""
    shapes = [y.shape for y in outs]
    m = sum(y.numel() for y in outs)
    live = [k for k, y in enumerate(outs) if y.requires_grad]
    if not live or m == 0:
        return split_rows([zeros_like_grad(x, m) for x in leaves], shapes)
    cot = eye_blocks(shapes, outs, cached=True)  # torch.stack below copies every row
    rows: list[list[torch.Tensor]] = [[] for _ in leaves]
    for r in range(m):
        grads = torch.autograd.grad(
            [outs[k] for k in live],
            leaves,
            grad_outputs=[cot[k][r] for k in live],
            # a differentiable Jacobian needs the forward graph for its own backward
            retain_graph=create_graph or r < m - 1,
            create_graph=create_graph,
            allow_unused=True,
        )
        for j, g in enumerate(grads):
            rows[j].append(g)
    per_input = [
        zeros_like_grad(x, m)
        if all(g is None for g in rj)
        else torch.stack([torch.zeros_like(x) if g is None else g for g in rj])
        for x, rj in zip(leaves, rows, strict=True)
    ]
    return split_rows(per_input, shapes)


# --------------------------------------------------------------------------- forward mode
