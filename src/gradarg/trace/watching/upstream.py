"""The upstream gradient given to ``backward()`` for a loss that is already a mean: the
``gradient`` argument of ``loss.backward(gradient)`` (``grad_tensors`` of
``torch.autograd.backward``) is the vector ``v`` of the vector-Jacobian product ``v^T J``
(PyTorch's ``torch.autograd.backward`` docs), so for a scalar loss every gradient is ``v``
times the loss's.  ``backward(torch.tensor(1 / N))`` on a loss that already divided by its
``N`` terms divides by ``N`` twice: correct for a sum (``reduction='sum'``) or for per-example
losses added over ``N`` calls, too small by ``N`` for a mean.

Read at each outermost ``backward()`` by :class:`.lossnodes.LossNodes` (the loss's root node
and the upstream gradient given); said by :func:`upstream_scaled`.

Imports :mod:`.finding`, :mod:`.reducedfactor` and ``trace.graph.nodes`` only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import torch

from ..graph.nodes import node_class, saved_value
from .finding import Finding, Options
from .reducedfactor import reduced_terms

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = ["Upstream", "read", "upstream_scaled"]


class Upstream(NamedTuple):
    """A scalar loss given the upstream gradient ``value`` (not 1); ``terms``: the number the
    loss's own mean divided by (``None``: not a mean, or not known); ``loss``: its root node."""

    value: float
    terms: int | None
    loss: str


def _mean_terms(node: Any) -> int | None:
    """The number of terms a mean at ``node`` (a loss's root) divided by, else ``None``."""
    kind = node_class(node)
    if kind == "MeanBackward0":
        n = saved_value(node, "_saved_self_sym_numel", hooked=False)
        return int(n) if isinstance(n, int) else None
    if saved_value(node, "_saved_weight", hooked=False) is not None:
        return None  # a weighted mean divides by the weights' sum
    reduced = reduced_terms(node)
    return reduced[1] if reduced is not None and reduced[0] == "mean" else None


def read(tensors: Any, grads: Any) -> Upstream | None:
    """For ``backward(tensors, grad_tensors)`` with one scalar loss and a scalar upstream
    gradient other than 1, :class:`Upstream`; else ``None``."""
    loss = tensors[0] if isinstance(tensors, (list, tuple)) and len(tensors) == 1 else tensors
    g = grads[0] if isinstance(grads, (list, tuple)) and len(grads) == 1 else grads
    if not (isinstance(loss, torch.Tensor) and loss.numel() == 1 and loss.grad_fn is not None
            and isinstance(g, torch.Tensor) and g.numel() == 1):
        return None
    value = float(g.detach())
    if value == 1:
        return None
    return Upstream(value, _mean_terms(loss.grad_fn), node_class(loss.grad_fn))


def upstream_scaled(w: GradWatch, o: Options) -> Finding:
    """The last :class:`Upstream` seen, in words: a problem when it is ``1 / N`` for a mean
    over ``N`` terms, else a note."""
    u = w.lossnodes.found.get("upstream")
    if u is None:
        return Finding("upstream gradient", True)
    said = (f"backward() was given the upstream gradient {u.value:.4g} for a scalar loss "
            f"({u.loss}; observed: the gradient argument of the call), so every gradient is "
            f"{u.value:.4g} times the loss's (backward(v) computes v times the loss's "
            f"gradient)")
    if u.terms is not None and u.terms > 1 and abs(u.value * u.terms - 1) < 1e-6:
        return Finding("upstream gradient", True, (
            f"{said}; that is 1 / {u.terms}, and the loss is already a mean over its "
            f"{u.terms} terms: the gradient is divided by {u.terms} twice ({u.terms} times too "
            f"small); call loss.backward() on the mean, or backward(1 / N) only on a sum or "
            f"on per-example losses added over N calls"))
    return Finding("upstream gradient", True, note=said)
