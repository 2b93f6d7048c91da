"""Scores multiplied by a 0/1 tensor before a log-sigmoid, a softplus or a binary cross-entropy
with logits: where the factor is 0 the score is 0 whatever the parameters, the function still
gives it a value (``logsigmoid(0) = -log 2``, ``softplus(0) = log 2``, a BCE of ``log 2``), so
each such entry adds a constant to the loss and sends no gradient back: it is not removed, it is
frozen at ``sigma(0) = 1/2``.  Binary codes ``{0, 1}`` used where branch signs ``{-1, +1}``
belong (a hierarchical softmax's path, a pairwise label), or a padding mask applied to the
logits instead of to the loss.  Read from the loss's first nodes at the ``backward()`` call,
before the backward frees what they saved: a ``LogSigmoidBackward0``, ``SoftplusBackward0`` or
``BinaryCrossEntropyWithLogitsBackward0`` whose input is (through at most one negation) a
``MulBackward0`` by a factor without autograd history whose entries are all 0 or 1, some 0;
not when the function's output is then multiplied by a 0/1 factor zero at those entries too,
or the BCE's ``weight`` is (the constant terms are removed there).

Imports ``trace.graph.nodes``' ``saved_value`` and :mod:`.slip` only.
"""

from __future__ import annotations

from typing import Any

import torch

from ..graph.nodes import saved_value
from .slip import Slip

__all__ = ["AT_ZERO", "STARTS", "masked_scores"]

# the function's name and its value (as a loss term, up to sign) at a score of 0
AT_ZERO = {"LogSigmoidBackward0": ("logsigmoid", "-log 2"),
           "SoftplusBackward0": ("softplus", "log 2"),
           "BinaryCrossEntropyWithLogitsBackward0": ("binary_cross_entropy_with_logits",
                                                     "log 2")}
_MOST = 1 << 22  # entries of a factor read at most


# the node classes its scan starts from: with none of them in the nodes given, it finds nothing
STARTS = frozenset(AT_ZERO)


def masked_scores(walked: list[Any]) -> Slip | None:
    """The first node of ``walked`` (a loss's first autograd nodes) of :data:`AT_ZERO` whose
    scores were multiplied by a 0/1 factor with some 0 that no later factor removes, as a
    :class:`~.slip.Slip` ``"masked-scores"``: ``op`` the node's name, ``shape`` the factor's
    broadcast to the scores, ``other`` (entries 0, all entries); ``None``: none."""
    for n in walked:
        name = type(n).__name__
        if name not in AT_ZERO:
            continue
        product = _below(n)
        if product is None:
            continue
        for attr in ("_saved_self", "_saved_other"):
            mask = _zero_one(saved_value(product, attr, hooked=False))
            if mask is None:
                continue
            zeros = mask == 0
            if _removed_after(n, walked, zeros):
                break
            return Slip("masked-scores", name, tuple(zeros.shape),
                        (int(zeros.sum()), zeros.numel()))
    return None


def _below(node: Any) -> Any | None:
    """The ``MulBackward0`` that made ``node``'s input, through at most one ``NegBackward0``."""
    for _ in range(2):
        children = [c for c, _ in node.next_functions if c is not None]
        if len(children) != 1:
            return None
        node = children[0]
        if type(node).__name__ == "MulBackward0":
            return node
        if type(node).__name__ != "NegBackward0":
            return None
    return None


def _zero_one(t: Any) -> torch.Tensor | None:
    """``t`` when it is a tensor without history of at least one dimension whose entries are
    all 0 or 1, some 0; else ``None``."""
    if (not isinstance(t, torch.Tensor) or t.requires_grad or t.dim() == 0 or t.is_complex()
            or not 0 < t.numel() <= _MOST):
        return None
    t = t.detach()
    if not bool(((t == 0) | (t == 1)).all()) or not bool((t == 0).any()):
        return None
    return t


def _removed_after(node: Any, walked: list[Any], zeros: torch.Tensor) -> bool:
    """The constant entries do not reach the loss: the BCE's saved ``weight`` is 0 wherever
    ``zeros`` is, or a ``MulBackward0`` of ``walked`` takes ``node``'s output (through at most
    one negation) times a 0/1 factor that is 0 there too."""
    if type(node).__name__ == "BinaryCrossEntropyWithLogitsBackward0":
        weight = saved_value(node, "_saved_weight", hooked=False)
        if isinstance(weight, torch.Tensor) and _covers(weight.detach() == 0, zeros):
            return True
    for m in walked:
        if type(m).__name__ not in ("MulBackward0", "NegBackward0"):
            continue
        if not _feeds(m, node):
            continue
        for attr in ("_saved_self", "_saved_other"):
            later = _zero_one(saved_value(m, attr, hooked=False))
            if later is not None and _covers(later == 0, zeros):
                return True
    return False


def _feeds(parent: Any, node: Any) -> bool:
    """``parent``'s input is ``node``'s output, directly or through one node."""
    for c, _ in parent.next_functions:
        if c is node or (c is not None and any(g is node for g, _ in c.next_functions)):
            return True
    return False


def _covers(later: torch.Tensor, zeros: torch.Tensor) -> bool:
    """Every entry where ``zeros`` holds is also zeroed by ``later`` (broadcast)."""
    try:
        return bool((later | ~zeros).all())
    except RuntimeError:
        return False
