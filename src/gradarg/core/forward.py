"""Forward mode: the columns of a Jacobian from Jacobian–vector products with one-hot tangents.

Forward mode batches ``fn`` itself (``torch.func.vmap`` over ``torch.func.jvp``, as
``torch.func.jacfwd``), which fails on ``.item()``, data-dependent control flow, in-place writes
into captured buffers or ops without batching rules; then :func:`forward_loop` takes one JVP
per column with dual tensors.  Random draws are handled by replaying the same RNG state for
every evaluation (and ``randomness="same"`` inside ``vmap``).  Where measured faster
(:mod:`.speeds`), torch's older vectorized forward mode or the double-VJP give the same columns;
the choice is remembered in :data:`~gradarg.core.speeds.PLANS`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch.autograd.forward_ad as fwAD

from . import speeds
from .basis import Blocks, eye_blocks, split_cols, unshared, zeros_like_grad
from .functorch import VMAP_ERRORS, batched, jvp
from .graph import call, custom_nodes, grad_on, recorded_forward, walk_graph

__all__ = ["forward_by_double_vjp", "forward_legacy_batched", "forward_loop",
           "forward_vectorized", "plan_key"]


def _double_vjp_columns(
    leaves: tuple[torch.Tensor, ...],
    outs: tuple[torch.Tensor, ...],
    forward_nodes: Sequence[Any],
) -> list[torch.Tensor] | None:
    """The columns ``(n, *y_k.shape)`` per output from a recorded forward pass, or ``None``.

    See :func:`forward_by_double_vjp`; ``forward_nodes`` are the graph's nodes (already checked
    to hold no ``autograd.Function``).
    """
    n = sum(x.numel() for x in leaves)
    live = [k for k, y in enumerate(outs) if y.requires_grad]
    live_outs = [outs[k] for k in live]
    with grad_on():
        us = [torch.zeros_like(y, requires_grad=True) for y in live_outs]
        gs = torch.autograd.grad(live_outs, leaves, us, create_graph=True, allow_unused=True)
    used = [j for j, g in enumerate(gs) if g is not None]
    if not used or any(gs[j].grad_fn is None for j in used):
        return None
    stop = {id(node) for node in forward_nodes}
    recorded = [
        node for node in walk_graph([gs[j].grad_fn for j in used], stop=stop) if id(node) not in stop
    ]
    if custom_nodes(recorded) or not all(
        node.name() in speeds.LEGACY_FAST_DOUBLE_BACKWARD for node in recorded
    ):
        return None
    tangents = eye_blocks([x.shape for x in leaves], leaves, cached=True)
    found = torch.autograd.grad(
        [gs[j] for j in used], us, [tangents[j] for j in used],
        is_grads_batched=True, allow_unused=True,
    )  # fmt: skip
    by_output = dict(zip(live, found, strict=True))
    return [
        zeros_like_grad(y, n) if by_output.get(k) is None else unshared(by_output[k], tangents)
        for k, y in enumerate(outs)
    ]


def forward_by_double_vjp(
    fn: Callable[..., Any], xs: tuple[torch.Tensor, ...]
) -> tuple[Blocks, bool] | None:
    """All columns from the derivative of a VJP with respect to its cotangent, or ``None``.

    The VJP ``g(u) = J^T u`` is linear in ``u``, so its own VJP with cotangent ``t`` is
    ``J t``: one forward pass, one backward pass recorded with ``create_graph=True``, and one
    ``torch.autograd.grad(g, u, tangents, is_grads_batched=True)`` call give every column (the
    "double-VJP" trick: J. Townsend, *A new trick for calculating Jacobian vector products*,
    2017; the batched call is the public one ``torch.autograd.functional.jacobian`` uses).
    For few inputs and many outputs through non-linear layers (an MLP) it is cheaper than
    ``torch.func.vmap`` over ``torch.func.jvp``.

    Used only where the result is the forward-mode one: real floating tensors, no
    ``autograd.Function`` (or compiled region) in the graph (its backward, not its forward-mode
    formula, would be differentiated), every recorded backward node in
    :data:`~gradarg.core.speeds.LEGACY_FAST_DOUBLE_BACKWARD`, at most :data:`~gradarg.core.speeds.LEGACY_MAX_ROWS` columns.  ``None``
    otherwise, or when torch refuses (an op with no double backward).
    """
    n = sum(x.numel() for x in xs)
    if not speeds.USE_LEGACY_BATCHED_GRAD or n == 0 or n > speeds.LEGACY_MAX_ROWS:
        return None
    try:
        rec = recorded_forward(fn, xs)
        if rec is None:
            return None
        leaves, outs, is_tuple, nodes = rec
        cols = _double_vjp_columns(leaves, outs, nodes)
    except VMAP_ERRORS:
        return None
    return (None if cols is None else (split_cols(cols, [x.shape for x in xs]), is_tuple))


def forward_legacy_batched(
    fn: Callable[..., Any], xs: tuple[torch.Tensor, ...]
) -> tuple[Blocks, bool]:
    """All columns from torch's own vectorized forward mode:
    ``torch.autograd.functional.jacobian(fn, xs, vectorize=True, strategy="forward-mode")``
    (public; dual tensors batched by torch's older batching rules).

    Fastest of torch's routes for small Jacobians of matrix products and elementwise ops
    (``nox -s bench``); slow where the older rules loop (``W @ x``: ``mv``), so
    :func:`forward_vectorized` takes it only for graphs of :data:`~gradarg.core.speeds.LEGACY_FAST_BACKWARD` nodes.
    Raises what torch raises (random ops, ops without a forward-mode formula).
    """
    holder: list[bool] = []

    def flat_fn(*args: torch.Tensor) -> tuple[torch.Tensor, ...]:
        outs, is_tuple = call(fn, args, dual=True)  # torch made each argument a dual tensor
        holder.append(is_tuple)
        return outs

    found = torch.autograd.functional.jacobian(
        flat_fn, xs, vectorize=True, strategy="forward-mode"
    )
    blocks = [list(row) for row in found]
    return blocks, holder[0]


def _legacy_forward_plan(
    fn: Callable[..., Any], xs: tuple[torch.Tensor, ...], allow_double: bool = True
) -> tuple[str, tuple[Blocks, bool] | None]:
    """Record ``fn`` once and choose: ``"double"`` (:func:`forward_by_double_vjp`, computed here
    from the same recorded pass; only with ``allow_double``, for graphs with a node of
    :data:`~gradarg.core.speeds.DOUBLE_VJP_WINS`), ``"legacy"`` (every node in :data:`~gradarg.core.speeds.LEGACY_FAST_BACKWARD`:
    :func:`forward_legacy_batched`) or ``"func"`` (``torch.func``)."""
    try:
        rec = recorded_forward(fn, xs)
        if rec is None:
            return "func", None
        leaves, outs, is_tuple, nodes = rec
        names = {node.name() for node in nodes}
        cols = None
        if allow_double and names & speeds.DOUBLE_VJP_WINS:
            cols = _double_vjp_columns(leaves, outs, nodes)
    except VMAP_ERRORS:
        return "func", None
    if cols is not None:
        return "double", (split_cols(cols, [x.shape for x in xs]), is_tuple)
    columns = sum(x.numel() for x in xs)
    return ("legacy" if speeds.legacy_forward_eligible(names, columns) else "func"), None


def forward_vectorized(
    fn: Callable[..., Any],
    xs: tuple[torch.Tensor, ...],
    *,
    create_graph: bool = False,
    allow_double: bool = False,
    path: str | None = None,
) -> tuple[Blocks, bool]:
    """All columns in one batched call.

    Without ``create_graph``, for real tensors and at most :data:`~gradarg.core.speeds.LEGACY_MAX_ROWS` columns, the
    older batched paths where measured faster: torch's vectorized forward mode
    (:func:`forward_legacy_batched`) when every node of the graph is in
    :data:`~gradarg.core.speeds.LEGACY_FAST_BACKWARD`, but with ``allow_double`` the double-VJP
    (:func:`forward_by_double_vjp`) first for graphs with a linear layer's bias
    (:data:`~gradarg.core.speeds.DOUBLE_VJP_WINS`) when its nodes allow; otherwise, and whenever those refuse,
    ``vmap`` over one-hot tangents (as ``torch.func.jacfwd``).  The double-VJP differentiates
    the backward formulas, so it is not independent of them: ``jacobian(method="auto")`` allows
    it, ``method="forward"`` (forward-mode formulas only, e.g. to check a backward) does not.  ``create_graph`` needs nothing more there: the tangents are
    computed with differentiable operations, recorded by autograd when ``xs`` (or tensors
    ``fn`` captures) require grad.

    ``path`` (``"legacy"``, ``"double"`` or ``"func"``: a route trial's or a remembered
    plan's, :class:`~gradarg.core.speeds.RouteTrial`) takes that path instead of the tables;
    :class:`~gradarg.core.speeds.RouteUnavailable` when it does not apply here.
    """
    n = sum(x.numel() for x in xs)
    if path in ("legacy", "double"):
        if create_graph or not 0 < n <= speeds.LEGACY_MAX_ROWS:
            raise speeds.RouteUnavailable(path)
        state = torch.get_rng_state()
        try:
            found = (forward_legacy_batched(fn, xs) if path == "legacy"
                     else forward_by_double_vjp(fn, xs))
        except VMAP_ERRORS:
            found = None
        if found is None:
            torch.set_rng_state(state)
            raise speeds.RouteUnavailable(path)
        return found
    if path is None and not create_graph and speeds.USE_LEGACY_BATCHED_GRAD and 0 < n <= speeds.LEGACY_MAX_ROWS:
        state = torch.get_rng_state()
        key = plan_key(xs, allow_double)
        plan = speeds.PLANS.get(fn, key)
        found = None
        if plan is None:
            plan, found = _legacy_forward_plan(fn, xs, allow_double)
            speeds.PLANS.set(fn, key, plan)
            torch.set_rng_state(state)
        if found is None and plan == "legacy":
            try:
                found = forward_legacy_batched(fn, xs)
            except VMAP_ERRORS:
                speeds.PLANS.set(fn, key, "func")
                torch.set_rng_state(state)
        elif found is None and plan == "double":
            found = forward_by_double_vjp(fn, xs)
            if found is None:
                torch.set_rng_state(state)
        if found is not None:
            return found
    holder: list[bool] = []

    def flat_fn(*args: torch.Tensor) -> torch.Tensor | tuple[torch.Tensor, ...]:
        outs, is_tuple = call(fn, args)
        holder.append(is_tuple)
        # one output as a tensor, not a 1-tuple: ~30 us less pytree work in jvp and vmap
        return outs[0] if len(outs) == 1 else outs

    in_shapes = [x.shape for x in xs]
    tangents = eye_blocks(in_shapes, xs, cached=True)
    cols = batched(lambda *t: jvp(flat_fn, xs, t), tangents, randomness="same")
    cols = tuple(unshared(c, tangents) for c in cols)
    return split_cols(cols, in_shapes), holder[0]


def forward_loop(
    fn: Callable[..., Any], xs: tuple[torch.Tensor, ...], *, create_graph: bool = False
) -> tuple[Blocks, bool]:
    """One JVP per input element with ``torch.autograd.forward_ad`` dual tensors.

    ``create_graph`` keeps ``xs`` attached (not detached), so the tangents are recorded.
    """
    n = sum(x.numel() for x in xs)
    tangents = eye_blocks([x.shape for x in xs], xs, cached=True)  # torch.stack below copies
    state = torch.get_rng_state()
    primals = xs if create_graph else tuple(x.detach() for x in xs)
    per_col: list[list[torch.Tensor]] | None = None
    is_tuple = False
    for c in range(n):
        torch.set_rng_state(state)
        with fwAD.dual_level():
            duals = tuple(fwAD.make_dual(x, t[c]) for x, t in zip(primals, tangents, strict=True))
            outs, is_tuple = call(fn, duals, dual=True)
            if per_col is None:
                per_col = [[] for _ in outs]
            for k, y in enumerate(outs):
                tangent = fwAD.unpack_dual(y).tangent
                per_col[k].append(torch.zeros_like(y) if tangent is None else tangent)
    if per_col is None:  # no input elements, so no columns: one plain call gives the output shapes
        with torch.no_grad():
            outs, is_tuple = call(fn, xs)
        cols = [torch.zeros((0, *y.shape), dtype=y.dtype, device=y.device) for y in outs]
    else:
        cols = [torch.stack(col) for col in per_col]
    return split_cols(cols, [x.shape for x in xs]), is_tuple


def plan_key(xs: Sequence[torch.Tensor], allow_double: bool) -> tuple:
    """The key of the forward route's plan in :data:`~gradarg.core.speeds.PLANS`."""
    return ("forward", speeds.signature(xs), allow_double)
