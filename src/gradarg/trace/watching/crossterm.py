"""A loss term that multiplies a parameter by a value computed from parameters another
optimizer holds: backward sends both a gradient.

SAC's temperature loss, ``-(log_alpha * (log_pi + target_entropy)).mean()``, is meant to train
``log_alpha`` alone; without ``log_pi.detach()`` the policy gets a gradient from it too, scaled
by ``log_alpha``, and its optimizer reads that sum (Haarnoja et al. 2018, "Soft Actor-Critic
Algorithms and Applications", https://arxiv.org/abs/1812.05905, eq. 18: the expectation is
over actions of the current policy, not a function of its parameters).  The same shape, a
parameter times a value with history, trains a learned loss weight; that one is named only
when the two sides are held by different optimizers: one optimizer for the parameter, others
(none of them holding it) for what the value was computed from.

Seen here, at each outermost ``backward()``, from a ``MulBackward0`` among the loss's first
nodes: one operand is a parameter itself (its ``AccumulateGrad``, not a function of it), the
other has history; the parameters that history reaches are read then.  Said by
:func:`cross_term` against the optimizers whose steps held them.

Read by :class:`.lossnodes.LossNodes` (:data:`NODE`, :func:`read`).
Imports :mod:`.finding` and ``trace.graph`` only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import torch

from ..graph.nodes import children, first_nodes, leaf_tensor
from .finding import Finding, Options, shown

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = ["NODE", "Cross", "cross_term", "read"]

NODE = "MulBackward0"
_LIMIT = 50_000  # nodes walked at most below the other factor


class Cross(NamedTuple):
    """``factor``: the parameter a loss term multiplies; ``reached``: the leaves (parameters)
    the other factor was computed from."""

    factor: torch.Tensor
    reached: tuple[torch.Tensor, ...]


def read(node: Any) -> Cross | None:
    """A product of a parameter and a value with history, and the leaves that value reaches."""
    kids = [c for c, _ in children(node)]
    if len(kids) != 2 or any(c is None for c in kids):
        return None
    leaves = [leaf_tensor(c) for c in kids]
    for i in (0, 1):
        p, other = leaves[i], kids[1 - i]
        if p is None or leaves[1 - i] is not None or not isinstance(p, torch.nn.Parameter):
            continue
        reached = {id(t): t for n in first_nodes([other], _LIMIT)
                   if (t := leaf_tensor(n)) is not None}
        reached.pop(id(p), None)
        if reached:
            return Cross(p, tuple(reached.values()))
    return None


def cross_term(w: GradWatch, o: Options) -> Finding:
    """The term named when one optimizer holds the factor and none of what the other side
    reached, and another optimizer holds some of that."""
    del o
    found: Cross | None = w.lossnodes.found.get("cross")
    if found is None:
        return Finding("loss term across optimizers", True)
    ids = {id(t) for t in found.reached}
    mine = [h for h in w.grads.optimizers if any(t is found.factor for t in h.held)]
    others = [h for h in w.grads.optimizers if not any(t is found.factor for t in h.held)
              and any(id(t) in ids for t in h.held)]
    if not mine or not others or any(id(t) in ids for h in mine for t in h.held):
        return Finding("loss term across optimizers", True)
    names = w.watched.owner
    factor = names[found.factor][0] if found.factor in names else "a parameter"
    reached = [name for t, (name, _) in names.items() if id(t) in ids]  # the model's order
    return Finding("loss term across optimizers", True, (
        f"a term of the loss multiplies parameter '{factor}' (held by its own optimizer, "
        f"{type(mine[0].optimizer).__name__}) by a value computed from {len(reached)} "
        f"parameter(s) that another optimizer ({type(others[0].optimizer).__name__}) holds "
        f"({shown(reached, 3)}): backward sends them a gradient from this term too, scaled "
        f"by '{factor}', and their optimizer reads it (observed: the loss's graph at "
        f"backward()); a term meant to train '{factor}' alone, such as SAC's temperature "
        f"loss -(log_alpha * (log_pi + target_entropy)), takes the other factor detached "
        f"(log_pi.detach())"))
