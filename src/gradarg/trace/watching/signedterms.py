"""A loss made of terms added and subtracted, ``label_loss - lam * domain_loss``, whose
subtracted term is the only one that reaches some parameters: an optimizer step on them
raises that term (it is maximised), so a head meant to predict is trained to be wrong, read
from the loss's graph at the ``backward()`` call.  The signs are followed from the loss
down through ``+``, ``-``, negation and products or quotients by a constant, to the terms
that are known loss functions (:data:`TERMS`); the parameters each term reaches are the
``AccumulateGrad`` nodes below it.  Domain-adversarial training means the opposite: the head
minimises its loss and only the features get the reversed gradient (a gradient reversal
layer, Ganin and Lempitsky, 2015, https://arxiv.org/abs/1409.7495).

Imports :func:`gradarg.trace.graph.nodes.saved_value` and :func:`gradarg.trace.graph.values.number` only.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import torch

from ..graph.nodes import saved_value
from ..graph.values import number

__all__ = ["TERMS", "Ascended", "ascended", "loss_terms"]

TERMS = {"NllLossBackward0": "cross_entropy (nll_loss)", "NllLoss2DBackward0": "nll_loss",
         "MseLossBackward0": "mse_loss", "L1LossBackward0": "l1_loss",
         "SmoothL1LossBackward0": "smooth_l1_loss", "HuberLossBackward0": "huber_loss",
         "BinaryCrossEntropyBackward0": "binary_cross_entropy",
         "BinaryCrossEntropyWithLogitsBackward0": "binary_cross_entropy_with_logits"}
DEPTH = 8  # sign-keeping nodes from the loss down to a term
VISITS = 20000  # nodes visited below each term


class Ascended(NamedTuple):
    """The term ``term`` (a loss function's name) enters the loss with factor ``factor`` <= 0
    and is the only term that reaches the parameters ``params`` (their ``id``)."""

    term: str
    factor: float
    params: frozenset[int]


def _constant(node: Any, live: int) -> float | None:
    """The one-number factor without history of a product or quotient node whose other
    operand carries no gradient (``None``: not such a factor)."""
    attr = ("_saved_other", "_saved_self")[live] if type(node).__name__ == "MulBackward0" \
        else "_saved_other"
    return number(saved_value(node, attr, hooked=False))


def _terms(root: Any, known: bool = True) -> list[tuple[Any, float]]:
    """The known loss terms under ``root`` with their factors; ``[]`` where a node that is
    neither a term nor sign-keeping sits between.  ``known=False``: any node that is not
    sign-keeping is a term (the parts of a weighted sum, whatever computed them)."""
    found: list[tuple[Any, float]] = []
    todo = [(root, 1.0, 0)]
    while todo:
        n, f, depth = todo.pop()
        name = type(n).__name__
        if name in TERMS or (not known and name not in _KEEPS and depth):
            found.append((n, f))
            continue
        if depth >= DEPTH:
            return []
        edges = [(c, i) for i, (c, _) in enumerate(n.next_functions) if c is not None]
        if name in ("AddBackward0", "SubBackward0") and len(n.next_functions) == 2:
            alpha = saved_value(n, "_saved_alpha", hooked=False)
            alpha = float(alpha) if isinstance(alpha, (int, float)) else 1.0
            second = alpha if name == "AddBackward0" else -alpha
            todo += [(c, f * (1.0 if i == 0 else second), depth + 1) for c, i in edges]
        elif name == "NegBackward0" and len(edges) == 1:
            todo.append((edges[0][0], -f, depth + 1))
        elif name in ("MulBackward0", "DivBackward0") and len(edges) == 1:
            c = _constant(n, edges[0][1])
            if c is None or (name == "DivBackward0" and (edges[0][1] != 0 or c == 0)):
                return []
            todo.append((edges[0][0], f * (c if name == "MulBackward0" else 1 / c), depth + 1))
        else:
            return []
    return found


_KEEPS = {"AddBackward0", "SubBackward0", "NegBackward0", "MulBackward0", "DivBackward0"}
loss_terms = _terms  # the known loss terms below a loss, with the constant factor of each


def _params(term: Any) -> set[int]:
    seen, todo, params = {term}, [term], set()
    while todo and len(seen) <= VISITS:
        n = todo.pop()
        v = getattr(n, "variable", None)
        if isinstance(v, torch.Tensor):
            params.add(id(v))
        for c, _ in n.next_functions:
            if c is not None and c not in seen:
                seen.add(c)
                todo.append(c)
    return params


def ascended(root: Any) -> Ascended | None:
    """The first subtracted (or zero-weighted) term of the loss whose node is ``root`` that
    alone reaches some parameters (:class:`Ascended`, ``factor`` <= 0); ``None`` when the loss
    has fewer than two terms, none is subtracted or weighted by 0, or every parameter such a
    term reaches is reached by an added one."""
    terms = _terms(root)
    if len(terms) < 2 or all(f > 0 for _, f in terms):
        terms = _terms(root, known=False)  # a part weighted by 0, whatever computed it
        if len(terms) < 2 or all(f != 0 for _, f in terms):
            return None
    reach = [(n, f, _params(n)) for n, f in terms]
    added = set().union(*(p for _, f, p in reach if f > 0))
    for i, (n, f, p) in enumerate(reach):
        # a subtracted term against the added ones; a term weighted by 0 against every other
        alone = p - (added if f else set().union(*(q for j, (_, _, q) in enumerate(reach) if j != i)))
        if f <= 0 and alone:  # maximised, or weighted by 0: not trained at all
            kind = type(n).__name__
            return Ascended(TERMS.get(kind, kind.removesuffix("Backward0")), f, frozenset(alone))
    return None
