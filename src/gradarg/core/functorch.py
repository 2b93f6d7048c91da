"""``torch.func.vmap`` and ``torch.func.jvp`` as the routes call them, public or fast.

Every batched call in the core goes through :func:`batched` and :func:`jvp`: by default they
call the public ``torch.func``; with the private fast path on (``GRADARG_PRIVATE_FUNCTORCH=1``
or :func:`use_private_functorch`) they call torch's private building blocks of the same
transforms directly, skipping per-call argument and pytree handling (``nox -s bench`` reports
what that saves; ``tests/core/test_public_fallback.py`` checks both give the same results).
:data:`VMAP_ERRORS` is what a failed batched attempt may raise.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Sequence
from types import SimpleNamespace

import torch
import torch.autograd.forward_ad as fwAD
from torch.func import jvp as func_jvp
from torch.func import vmap

__all__ = ["VMAP_ERRORS", "VectorizationError", "batched", "jvp", "use_private_functorch"]


def _load_private_functorch() -> SimpleNamespace | None:
    """torch's private pieces of ``torch.func.vmap``/``jvp``, or ``None`` if they have moved.

    Only the optional fast path uses them (see :func:`use_private_functorch`); every result
    is computed through the public ``torch.func`` unless that switch is on.
    """
    try:
        from torch._C import _functorch as raw
        from torch._functorch import eager_transforms as eager
        from torch._functorch.vmap import lazy_load_decompositions

        if not isinstance(eager.JVP_NESTING, int):  # changed meaning: stay public
            return None
        return SimpleNamespace(
            add_batch_dim=raw._add_batch_dim,
            remove_batch_dim=raw._remove_batch_dim,
            vmap_increment_nesting=raw._vmap_increment_nesting,
            vmap_decrement_nesting=raw._vmap_decrement_nesting,
            unwrap_for_grad=raw._unwrap_for_grad,
            lazy_load_decompositions=lazy_load_decompositions,
            enter_jvp_nesting=eager.enter_jvp_nesting,
            exit_jvp_nesting=eager.exit_jvp_nesting,
            jvp_nesting=lambda: eager.JVP_NESTING,
        )
    except (ImportError, AttributeError):
        return None


# The private fast path: off unless asked for (GRADARG_PRIVATE_FUNCTORCH=1 in the environment,
# or use_private_functorch(True)).  None = off or unavailable.
_PRIVATE: SimpleNamespace | None = None


def use_private_functorch(enable: bool = True) -> bool:
    """Switch the private functorch fast path on or off; return whether it is now on.

    On, :func:`batched` and :func:`jvp` call torch's private building blocks of
    ``torch.func.vmap`` and ``torch.func.jvp`` directly, skipping their per-call argument and
    pytree handling (``nox -s bench`` reports what that saves).  Off (the default), they call
    ``torch.func``.  Both give the same results (``tests/core/test_public_fallback.py``).  When the
    private pieces cannot be found (another torch version), the switch stays off.
    """
    global _PRIVATE
    _PRIVATE = _load_private_functorch() if enable else None
    return _PRIVATE is not None


if os.environ.get("GRADARG_PRIVATE_FUNCTORCH", "") == "1":
    use_private_functorch(True)

# What a failed vectorized attempt may raise; anything else is the caller's bug and propagates.
VMAP_ERRORS = (RuntimeError, NotImplementedError, ValueError, TypeError, UserWarning)


class VectorizationError(RuntimeError):
    """Raised when ``vectorize=True`` was requested but the function cannot be batched."""


def batched(
    f: Callable[..., torch.Tensor | tuple[torch.Tensor, ...]],
    args: Sequence[torch.Tensor],
    randomness: str = "error",
) -> tuple[torch.Tensor, ...]:
    """``torch.func.vmap(f, randomness=randomness)(*args)`` over dim 0 of every argument.

    ``f`` returns a tensor or a tuple of tensors (a single tensor is cheaper: less pytree work
    in ``vmap``); the result is always a tuple, every output with the batch dimension first (an
    output that does not depend on the batch is expanded).  With the private fast path on
    (:func:`use_private_functorch`), the same steps as ``torch.func.vmap`` for flat tensor
    arguments and outputs, without its per-call pytree and argument processing.
    """
    p = _PRIVATE
    if p is None:
        out = vmap(f, randomness=randomness)(*args)
        return (out,) if isinstance(out, torch.Tensor) else tuple(out)
    p.lazy_load_decompositions()
    size = args[0].shape[0]
    level = p.vmap_increment_nesting(size, randomness)
    try:
        outs = f(*(p.add_batch_dim(a, 0, level) for a in args))
        if isinstance(outs, torch.Tensor):
            outs = (outs,)
        return tuple(p.remove_batch_dim(y, level, size, 0) for y in outs)
    finally:
        p.vmap_decrement_nesting()


# --------------------------------------------------------------------------- reverse mode


def jvp(
    fn: Callable[..., torch.Tensor | tuple[torch.Tensor, ...]],
    primals: tuple[torch.Tensor, ...],
    tangents: Sequence[torch.Tensor],
) -> torch.Tensor | tuple[torch.Tensor, ...]:
    """``torch.func.jvp(fn, primals, tangents)[1]`` for flat tuples of tensors.

    ``fn`` returns a tensor or a tuple of tensors; the tangent has the same structure.

    With the private fast path on (:func:`use_private_functorch`), the same steps as
    ``torch.func.jvp`` (a functorch JVP level, forward-mode dual tensors, a zero tangent for an
    output that does not depend on the inputs) without its pytree handling and argument checks.
    """
    p = _PRIVATE
    if p is None:
        return func_jvp(fn, primals, tuple(tangents))[1]
    level = p.enter_jvp_nesting()
    try:
        prev = torch._C._is_fwd_grad_enabled()
        torch._C._set_fwd_grad_enabled(True)
        try:
            # only the outermost functorch JVP opens the forward-AD dual level (as torch.func.jvp)
            ctx = fwAD.dual_level() if p.jvp_nesting() == 1 else contextlib.nullcontext()
            with ctx:
                duals = tuple(fwAD.make_dual(x, t) for x, t in zip(primals, tangents, strict=True))
                res = fn(*duals)
                single = isinstance(res, torch.Tensor)
                out = []
                for y in (res,) if single else res:
                    assert isinstance(y, torch.Tensor)
                    tangent = fwAD.unpack_dual(y).tangent
                    if tangent is None:
                        tangent = torch.zeros_like(y)
                    out.append(p.unwrap_for_grad(tangent, level))
                return out[0] if single else tuple(out)
        finally:
            torch._C._set_fwd_grad_enabled(prev)
    finally:
        p.exit_jvp_nesting()
