"""A distillation loss whose soft term at temperature ``T > 1`` is weighted like the hard term,
with no ``T**2``: ``alpha * CE(s, y) + (1 - alpha) * KL(softmax(t / T) || softmax(s / T))``.

The soft term's gradient with respect to the student's logits is ``(softmax(s / T) -
softmax(t / T)) / T`` per example, and the differences of softened probabilities are
themselves about ``1 / T`` of the unsoftened ones, so its gradient is about ``1 / T**2`` of the
hard term's scale; Hinton, Vinyals and Dean (2015, "Distilling the Knowledge in a Neural
Network", https://arxiv.org/abs/1503.02531, section 2) multiply the soft term by ``T**2`` so
that its share of the gradient does not change with ``T``.

Seen here, at each outermost ``backward()``, from an ``AddBackward0`` among the loss's first
nodes: exactly two terms under it (``signedterms.loss_terms``), a ``kl_div`` with a summed
reduction (``batchmean`` divides that sum by the batch; torch decomposes ``kl_div`` into
``target * (log(target) - input)`` and a sum) whose input is ``log_softmax`` of logits divided
by a constant ``T > 1``, and a cross-entropy (``nll_loss``); named when the two weights per
example are ``alpha`` and ``1 - alpha`` (they sum to 1) or are both 1.  With ``T**2`` in the
soft weight neither can hold: ``alpha + (1 - alpha) * T**2 = 1`` and ``lam * T**2 = 1 =
hard`` need ``T = 1`` (or a weight of exactly ``1 / T**2``).  Equal weights other than 1 are
not named: ``alpha = (1 - alpha) * T**2`` (0.9 at ``T = 3``) is a correct recipe.

Read by :class:`.lossnodes.LossNodes` (:data:`NODE`, :func:`read`); said by :func:`kd_unsquared`.
Imports :mod:`.signedterms`, :mod:`.finding` and ``trace.graph`` only.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, NamedTuple

import torch

from ..graph.nodes import saved_value
from ..graph.values import number
from .finding import Finding, Options
from .signedterms import loss_terms

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = ["NODE", "Unsquared", "kd_unsquared", "read"]

NODE = "AddBackward0"
"""The node read: a sum of loss terms."""


class Unsquared(NamedTuple):
    """A ``kl_div`` term at temperature ``temperature`` entering with weight ``soft`` per
    example, beside a cross-entropy with weight ``hard``."""

    temperature: float
    soft: float
    hard: float


def _number(node: Any, attr: str) -> float | None:
    return number(saved_value(node, attr, hooked=False))


def _temperature(log: Any) -> float | None:
    """``T`` of ``log_softmax(s / T)`` (or ``s * (1 / T)``) at node ``log``; ``None``: another
    input."""
    if log is None or type(log).__name__ != "LogSoftmaxBackward0":
        return None
    scaled = log.next_functions[0][0]
    kind = type(scaled).__name__ if scaled is not None else ""
    live = [i for i, (c, _) in enumerate(scaled.next_functions) if c is not None] if kind else []
    if kind == "DivBackward0" and live == [0]:
        return _number(scaled, "_saved_other")
    if kind == "MulBackward0" and len(live) == 1:
        c = _number(scaled, ("_saved_other", "_saved_self")[live[0]])
        return None if not c else 1 / c
    return None


def _only(node: Any) -> tuple[Any, int] | None:
    live = [(c, i) for i, (c, _) in enumerate(node.next_functions) if c is not None]
    return live[0] if len(live) == 1 else None


def _kl_temperature(total: Any) -> float | None:
    """``T`` when ``total`` sums ``kl_div``'s pointwise terms ``target * (log(target) -
    log_softmax(s / T))`` (``kl_div(..., reduction='sum' | 'batchmean')`` as torch
    decomposes it: a sum of a difference whose first operand has no history, the second a
    product of the log-probabilities with a target without history); else ``None``."""
    sub = _only(total)
    if sub is None or type(sub[0]).__name__ != "SubBackward0" or sub[0].next_functions[0][0]:
        return None
    mul = _only(sub[0])
    if mul is None or type(mul[0]).__name__ != "MulBackward0":
        return None
    log = _only(mul[0])
    if log is None:
        return None
    target = saved_value(mul[0], ("_saved_other", "_saved_self")[log[1]], hooked=False)
    if not isinstance(target, torch.Tensor) or target.requires_grad or target.dim() < 1:
        return None
    return _temperature(log[0])


def read(node: Any) -> Unsquared | None:
    terms = loss_terms(node, known=False)
    kinds = {type(n).__name__: (n, f) for n, f in terms}
    if len(terms) != 2 or set(kinds) != {"SumBackward0", "NllLossBackward0"}:
        return None
    (total, f), (_, hard) = kinds["SumBackward0"], kinds["NllLossBackward0"]
    sizes = saved_value(total, "_saved_self_sym_sizes", hooked=False)
    t = _kl_temperature(total)
    if t is None or t <= 1 or not sizes or hard <= 0:
        return None
    soft = f * int(sizes[0])  # per example, as batchmean's / batch and nll_loss's mean give it
    # alpha and 1 - alpha, or both 1: with T**2 in the soft weight neither holds unless T = 1
    one = [math.isclose(v, 1, rel_tol=1e-4) for v in (soft + hard, soft, hard)]
    if soft > 0 and (one[0] or (one[1] and one[2])):
        return Unsquared(t, soft, hard)
    return None


def kd_unsquared(w: GradWatch, o: Options) -> Finding:
    """The last :class:`Unsquared` read, in words."""
    u = w.lossnodes.found.get("kd")
    if u is None:
        return Finding("distillation scale", True)
    t2 = u.temperature ** 2
    return Finding("distillation scale", True, (
        f"the distillation term kl_div(log_softmax(s / T), ...) at temperature T = "
        f"{u.temperature:.4g} enters the loss with weight {u.soft:.4g} beside the hard "
        f"cross-entropy's {u.hard:.4g}, with no T**2 in it (observed: the constant factors "
        f"between each term and the loss): its gradient at the student's logits is about 1 / "
        f"T**2 = 1/{t2:.4g} of the hard term's scale, so the teacher's soft targets barely "
        f"reach the student; Hinton et al. (2015) multiply the soft term by T**2 "
        f"({t2:.4g} here) so that its share of the gradient does not change with T"))
