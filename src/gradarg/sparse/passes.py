"""The compressed passes: one batched VJP, JVP or Hessian-vector product per colour.

Every mode of :mod:`gradarg.sparse.modes` runs its passes through these functions, each in two
forms: the eager call's (``sj(fn, x)``, ``sh(f, x)``), which batches with ``torch.func.vmap``
and falls back to one pass per seed when an operation has no batching rule, and the compiled
call's (``*_pure``), a pure function of ``x`` and the seeds that ``torch.compile`` traces.

* reverse: the eager VJPs are ``torch.autograd.grad`` calls over the graph of one recorded
  forward pass, which the random certificate of :class:`~gradarg.SparseJacobian` reuses; the
  compiled ones ``torch.func.vjp``;
* forward: ``torch.func.jvp``, one tangent per colour;
* Hessian: :func:`hvp`, forward-over-reverse (``torch.func.jvp`` of ``torch.func.grad``), the
  one Hessian-vector product of both calls.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch.func import grad as func_grad
from torch.func import jvp as func_jvp
from torch.func import vmap

__all__ = [
    "NOT_SCALAR",
    "VMAP_ERRORS",
    "each",
    "hvp",
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
    """``seeds[c]ᵀ J`` for every ``c``: one batched backward pass over ``fn``'s graph."""
    if not y.requires_grad:  # y does not depend on x
        return torch.zeros(seeds.shape[0], *leaf.shape, dtype=leaf.dtype)

    def one(v: torch.Tensor) -> torch.Tensor:
        (g,) = torch.autograd.grad(
            y, leaf, v, retain_graph=True, allow_unused=True, materialize_grads=True
        )
        return g

    return each(one, seeds)


def jvp_of(fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor,
           ) -> Callable[[torch.Tensor], torch.Tensor]:
    """``t -> J t`` at ``x`` (``t`` flat or shaped like ``x``), by ``torch.func.jvp``."""
    return lambda t: func_jvp(fn, (x,), (t.view(x.shape),))[1]


def jvps(fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor, tangents: torch.Tensor,
         ) -> torch.Tensor:
    """``J t_c`` for every row ``t_c`` of ``tangents`` (eager): ``colours × y.shape``."""
    return each(jvp_of(fn, x), tangents, randomness="same")


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
    """``f``'s output as a 0-d tensor, or the ``ValueError`` saying it is not a scalar."""
    if not isinstance(out, torch.Tensor) or out.numel() != 1:
        raise ValueError(
            f"{NOT_SCALAR} (one-element tensor), got "
            f"{tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__}"
        )
    return out.reshape(())


def hvp(f: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor,
        ) -> Callable[[torch.Tensor], torch.Tensor]:
    """``v -> H v`` (flat) at ``x`` for the scalar ``f``: forward-over-reverse."""

    def grad_of(u: torch.Tensor) -> torch.Tensor:
        return scalar(f(u))

    return lambda v: func_jvp(func_grad(grad_of), (x,), (v.view(x.shape),))[1].reshape(-1)
