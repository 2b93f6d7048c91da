"""A vector–Jacobian product that is zero by construction: ``torch.autograd.grad(probs, x,
grad_outputs=torch.ones_like(probs))`` (or ``probs.backward(torch.ones_like(probs))``) where
``probs`` is a softmax.  A softmax's entries sum to 1 along its dimension, so ``vᵀJ = 0`` for
every ``v`` that is constant along that dimension: ``sum_i v_i * dp_i/dx = c * d(sum_i p_i)/dx
= 0``.  A "Jacobian penalty" built from that product is zero whatever the model does (the
gradient argument is the vector of ``vᵀJ``, not the Jacobian:
https://pytorch.org/docs/stable/generated/torch.autograd.grad.html).

Seen here, at each ``torch.autograd.grad`` call and each ``backward()`` given a gradient: an
output whose node is ``SoftmaxBackward0`` with a ``grad_outputs`` entry of its shape that is
constant along the softmax's saved ``dim`` (more than one entry there).  A random ``v``
(Hutchinson's estimator), ones on a ``log_softmax`` or on a sigmoid are not named.

Read by :class:`.lossnodes.LossNodes` (:func:`read`); said by :func:`ones_vjp`.  Imports
:mod:`.finding` and ``trace.graph`` only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import torch

from ..graph.nodes import saved_value
from ..graph.values import tensors
from .finding import Finding, Options

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = ["ConstantVJP", "ones_vjp", "read"]


class ConstantVJP(NamedTuple):
    """``call`` (``"torch.autograd.grad"`` or ``"backward()"``) was given a vector constant
    along dim ``dim`` of a softmax output of shape ``shape``; ``ones``: the vector is all ones."""

    call: str
    dim: int
    shape: tuple[int, ...]
    ones: bool


def _constant_along(v: torch.Tensor, dim: int) -> bool:
    return bool((v == v.select(dim, 0).unsqueeze(dim)).all())


def read(outputs: Any, grad_outputs: Any, call: str) -> ConstantVJP | None:
    """The first softmax output among ``outputs`` whose vector in ``grad_outputs`` is constant
    along the softmax's dimension; ``None``: none."""
    outs = list(tensors(outputs))
    vs = [grad_outputs] if isinstance(grad_outputs, torch.Tensor) else list(grad_outputs or ())
    for out, v in zip(outs, vs, strict=False):
        node = out.grad_fn
        if (node is None or type(node).__name__ != "SoftmaxBackward0"
                or not isinstance(v, torch.Tensor) or v.shape != out.shape or not out.dim()
                or v.is_complex()):
            continue
        dim = saved_value(node, "_saved_dim", hooked=False)
        if not isinstance(dim, int) or out.shape[dim] < 2:
            continue
        v = v.detach()
        if _constant_along(v, dim % out.dim()):
            return ConstantVJP(call, dim, tuple(out.shape), bool((v == 1).all()))
    return None


def ones_vjp(w: GradWatch, o: Options) -> Finding:
    """The last :class:`ConstantVJP` read, in words."""
    c = w.lossnodes.found.get("onesvjp")
    if c is None:
        return Finding("constant vector on a softmax", True)
    what = "all ones" if c.ones else "a vector constant along that dim"
    return Finding("constant vector on a softmax", True, (
        f"{c.call} was given grad_outputs of {what} for a softmax output of shape "
        f"{c.shape} (dim={c.dim}; observed: the vector and the output's SoftmaxBackward0): a "
        f"softmax sums to 1 along its dim, so this vector-Jacobian product vᵀJ is exactly "
        f"zero whatever the inputs, and a Jacobian penalty or regulariser built from it is "
        f"zero, with no effect on training; for the Jacobian's size use one VJP per output "
        f"class (torch.func.jacrev) or random vectors v (Hutchinson's estimator)"))
