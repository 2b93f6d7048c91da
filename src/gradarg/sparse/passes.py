"""The compressed passes: one batched VJP, JVP or Hessian-vector product per colour.

Every mode of :mod:`gradarg.sparse.modes` runs its passes through these functions, each in two
forms: the eager call's (``sj(fn, x)``, ``sh(f, x)``), which batches with ``torch.func.vmap``
and falls back to one pass per seed when an operation has no batching rule, and the compiled
call's (``*_pure``), a pure function of ``x`` and the seeds that ``torch.compile`` traces.

* reverse: the eager VJPs are ``torch.autograd.grad`` calls over the graph of one recorded
  forward pass, which the random certificate of :class:`~gradarg.SparseJacobian` reuses; the
  compiled ones ``torch.func.vjp``;
* forward: the eager JVPs (:func:`jvps`) are two backward passes over that same graph, the
  "double-backward trick": ``g(u) = uᵀJ`` is linear in ``u``, so the VJP of ``g`` with
  cotangent ``t`` is ``J t`` (Townsend, "A new trick for calculating Jacobian vector
  products", 2017; the identity behind ``torch.autograd.functional.jvp``).  The compiled ones
  are ``torch.func.jvp``; where an operation has no double backward, the eager call falls back
  to it;
* Hessian: eagerly (:func:`hvps`) reverse-over-reverse, one backward pass of
  ``∇f(x) · s`` per seed over the graph of one ``∇f`` built with ``create_graph``; compiled
  (:func:`hvp`) forward-over-reverse (``torch.func.jvp`` of ``torch.func.grad``).

Why two routes: eagerly, torch's forward mode costs more than autograd's backward passes.
Measured with torch 2.13 on one thread (medians; ``vmap`` over the seeds both ways): the
JVPs of Burgers (n = 2000, 3 tangents) 0.97 ms by ``torch.func.jvp`` against 0.26 ms by two
backward passes, Gray-Scott (2 × 48 × 48, 10) 1.98 against 0.72 ms, a per-sample MLP (8) 0.48
against 0.20 ms; the Hessian products of chained Rosenbrock + Powell (n = 5000, 4 seeds) 3.6
against 1.1 ms.  And the first forward-mode pass of a process loads torch's forward-mode
decompositions (TorchScript-compiled: 80-170 ms), which the backward passes never need.
Compiled, inductor fuses either route into a few kernels, and forward-over-reverse is what
``torch.compile`` traces through ``torch.func`` without a graph of a graph.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch.func import grad as func_grad
from torch.func import jvp as func_jvp
from torch.func import vmap

from .._validate import check_memory
from ..core.graph import custom_nodes, graph_names, walk_graph
from ..core.speeds import WRONG_BATCHED_BACKWARD
from ._layouts import check_x, check_y

__all__ = [
    "NOT_SCALAR",
    "VMAP_ERRORS",
    "each",
    "hvp",
    "hvps",
    "jvp_of",
    "jvps",
    "jvps_pure",
    "scalar",
    "vjps",
    "vjps_pure",
]

# What a failed batched attempt may raise (then the passes run one at a time).
VMAP_ERRORS = (RuntimeError, NotImplementedError, ValueError, TypeError)
NOT_SCALAR = "f must return a scalar"


def each(one: Callable[[torch.Tensor], torch.Tensor], seeds: torch.Tensor, *,
         randomness: str = "error", own: str | None = None) -> torch.Tensor:
    """``one`` over the first dimension of ``seeds``: one ``vmap`` call, or one call per seed
    when an operation has no batching rule (an error whose message holds ``own`` is the
    caller's own and is raised as it is)."""
    try:
        return vmap(one, randomness=randomness)(seeds)
    except VMAP_ERRORS as err:
        if own is not None and own in str(err):
            raise
        return torch.stack([one(s) for s in seeds])


def vjps(y: torch.Tensor, leaf: torch.Tensor, seeds: torch.Tensor) -> torch.Tensor:
    """``seeds[c]ᵀ J`` for every ``c``: one batched backward pass over ``fn``'s graph, or one
    pass per seed when the graph holds a node whose batched backward torch gets wrong
    (:data:`~gradarg.core.speeds.WRONG_BATCHED_BACKWARD`: ``cdist`` in torch 2.13)."""
    if not y.requires_grad:  # y does not depend on x
        return torch.zeros(seeds.shape[0], *leaf.shape, dtype=leaf.dtype)

    def one(v: torch.Tensor) -> torch.Tensor:
        (g,) = torch.autograd.grad(
            y, leaf, v, retain_graph=True, allow_unused=True, materialize_grads=True
        )
        return g

    if batched_wrongly(y):
        return torch.stack([one(s) for s in seeds])
    return each(one, seeds)


def batched_wrongly(y: torch.Tensor) -> str | None:
    """The name of a node of ``y``'s graph whose batched backward torch gets wrong
    (:data:`~gradarg.core.speeds.WRONG_BATCHED_BACKWARD`), or ``None``."""
    wrong = graph_names([y]) & WRONG_BATCHED_BACKWARD if y.requires_grad else set()
    return min(wrong) if wrong else None


def jvp_of(fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor,
           ) -> Callable[[torch.Tensor], torch.Tensor]:
    """``t -> J t`` at ``x`` (``t`` flat or shaped like ``x``), by ``torch.func.jvp``."""
    return lambda t: func_jvp(fn, (x,), (t.view(x.shape),))[1]


def jvps(fn: Callable[[torch.Tensor], torch.Tensor], y: torch.Tensor, leaf: torch.Tensor,
         tangents: torch.Tensor) -> torch.Tensor:
    """``J t_c`` for every row ``t_c`` of ``tangents`` (eager): ``colours × y.shape``, in
    ``y``'s dtype; ``y = fn(leaf)`` recorded with its graph.

    Two backward passes over that graph: ``g = Jᵀu`` for a zero ``u`` that requires grad,
    recorded (``create_graph``), then the VJP of ``g`` with cotangent ``t_c`` for each ``c``,
    batched by ``vmap``.  Where a custom ``autograd.Function`` is in the graph
    (:func:`has_custom_function`) or an operation of ``fn`` has no double backward, the JVPs are
    ``torch.func.jvp`` at ``leaf``'s value instead (one forward-mode pass per tangent, batched).
    """
    k = tangents.shape[0]
    if not y.requires_grad:  # y does not depend on x
        return torch.zeros(k, *y.shape, dtype=y.dtype)
    if not has_custom_function(y):
        try:
            u = torch.zeros_like(y, requires_grad=True)
            with torch.enable_grad():
                (g,) = torch.autograd.grad(y, leaf, u, retain_graph=True, create_graph=True,
                                           allow_unused=True, materialize_grads=True)
            if g.requires_grad:  # else J's backward does not depend on u: J is 0 (or cut)

                def one(t: torch.Tensor) -> torch.Tensor:
                    (jt,) = torch.autograd.grad(g, u, t.to(g.dtype), retain_graph=True)
                    return jt

                return each(one, tangents)
        except RuntimeError:  # an operation of fn has no double backward, or u went unused
            pass  # (fn itself ran when y was recorded: its own errors were raised there)
    x = leaf.detach()
    return each(jvp_of(fn, x), tangents.to(x.dtype), randomness="same").to(y.dtype)


def vjps_pure(fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor, v: torch.Tensor,
              ) -> torch.Tensor:
    """The compiled reverse pass: ``v_cᵀ J`` for every row of ``v``, flat."""
    y, pull = torch.func.vjp(fn, x)[:2]
    return vmap(lambda s: pull(s.view(y.shape).to(y.dtype))[0])(v).reshape(-1)


def jvps_pure(fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor, t: torch.Tensor,
              ) -> torch.Tensor:
    """The compiled forward pass: ``J t_c`` for every row of ``t``, flat."""
    return vmap(jvp_of(fn, x))(t).reshape(-1)


def scalar(out: object) -> torch.Tensor:
    """``f``'s output as a 0-d tensor, or the ``ValueError`` saying it is not a scalar, or the
    ``TypeError`` saying its dtype has no Hessian (integer, bool: it would be all zeros;
    complex: ``torch.func.hessian`` refuses it too)."""
    if not isinstance(out, torch.Tensor) or out.numel() != 1:
        raise ValueError(
            f"{NOT_SCALAR} (one-element tensor), got "
            f"{tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__}"
        )
    if not out.is_floating_point():
        why = ("a complex scalar has no Hessian in PyTorch's convention (torch.func.hessian "
               "refuses it too): take it of the real part, f(x).real"
               if out.is_complex() else
               "integer and bool results (argmax, comparisons, .long()) are not differentiable, "
               "so the Hessian would be all zeros")
        raise TypeError(f"{NOT_SCALAR} of a real floating dtype (float32, float64), got "
                        f"{out.dtype}: {why}")
    return out.reshape(())


def hvps(f: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor, seeds: torch.Tensor,
         ) -> torch.Tensor:
    """``H s_c`` for every row ``s_c`` of ``seeds`` (eager), ``colours × n``: ``∇f`` at ``x``
    recorded once (``create_graph``), then one backward pass of it per seed, batched by
    ``vmap``; forward-over-reverse (:func:`hvp`) where a custom ``autograd.Function`` is in
    the graph (:func:`has_custom_function`) or an operation has no double backward."""
    leaf = x.detach().requires_grad_(True)
    with torch.enable_grad():
        out = scalar(f(leaf))
    if not out.requires_grad:  # f does not depend on x
        return torch.zeros(seeds.shape[0], x.numel(), dtype=x.dtype)
    if not has_custom_function(out):
        try:
            with torch.enable_grad():
                (g,) = torch.autograd.grad(out, leaf, create_graph=True)
            if g.requires_grad:  # else f is linear in x (or its gradient was cut)

                def one(s: torch.Tensor) -> torch.Tensor:
                    (hs,) = torch.autograd.grad(g, leaf, s.view(x.shape), retain_graph=True)
                    return hs.reshape(-1)

                return each(one, seeds)
        except RuntimeError:  # an operation of f has no double backward, or x went unused
            pass  # (f itself ran above: its own errors were raised there)
    return each(hvp(f, x), seeds, randomness="same", own=NOT_SCALAR)


def has_custom_function(y: torch.Tensor) -> bool:
    """Whether ``y``'s graph holds a custom ``torch.autograd.Function`` (or a function of one,
    such as reentrant checkpointing): its backward may compute without a graph
    (``@once_differentiable``, NumPy), and a second backward pass through it would silently miss
    its terms, so the eager JVPs and Hessian products take torch's forward mode there, which
    uses the Function's ``jvp`` or refuses.  The graph is read by
    :func:`gradarg.core.graph.walk_graph`, the nodes by :func:`gradarg.core.graph.custom_nodes`."""
    return bool(custom_nodes(list(walk_graph([y.grad_fn]))))


def hvp(f: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor,
        ) -> Callable[[torch.Tensor], torch.Tensor]:
    """``v -> H v`` (flat) at ``x`` for the scalar ``f``: forward-over-reverse."""

    def grad_of(u: torch.Tensor) -> torch.Tensor:
        return scalar(f(u))

    return lambda v: func_jvp(func_grad(grad_of), (x,), (v.view(x.shape),))[1].reshape(-1)


def compiled_output_shape(fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor,
                          co: Any) -> tuple[int, ...]:
    """The shape of ``fn(x)``, checked against the pattern's coordinates ``co``, before a
    compiled Jacobian of ``fn`` is built; ``ValueError`` when ``fn``'s graph holds a node whose
    batched backward torch gets wrong (the compiled passes are batched by ``vmap``)."""
    check_x(x, co.n, co.x_shape)
    with torch.enable_grad():
        y = check_y(fn(x.detach().clone().requires_grad_()), co.m, co.y_shape)
    wrong = batched_wrongly(y)
    if wrong:
        raise ValueError(
            f"fn: torch {torch.__version__} batches the backward of {wrong} wrongly (vmap), "
            "so a compiled Jacobian of fn would be wrong: call the SparseJacobian itself, "
            "sj(fn, x), which runs one pass per colour there")
    return tuple(y.shape)


def check_pass_memory(passes: int, shape: tuple[int, int], x: torch.Tensor,
                      layout: torch.layout) -> None:
    """``MemoryError`` before ``passes`` compressed passes of an ``m × n`` Jacobian (twice
    ``passes × (m + n)`` values), or its dense result, would exceed the memory available."""
    m, n = shape
    size = 16 if x.is_complex() else 8  # fn may return float64 from a float32 x
    check_memory(f"the {passes} compressed passes of a {m} × {n} Jacobian",
                 2 * passes * (m + n) * size,
                 "Instead: fewer colours (a finer pattern), or Jacobian-vector products "
                 "(gradarg.backward_vjp, torch.func.jvp)")
    if layout == torch.strided:
        check_memory(f"the dense result (layout=torch.strided, {m} × {n})", m * n * size,
                     "Instead: layout=torch.sparse_coo (the default) or torch.sparse_csr, "
                     "which hold only the pattern's entries")
