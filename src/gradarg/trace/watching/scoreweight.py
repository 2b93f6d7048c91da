"""A policy-gradient weight that carries gradient from the log-probabilities of other samples:
``loss = -(A * logp)`` where the advantage ``A`` was computed, with its graph kept, from the
``logp`` it weights (a reward that holds the KL term ``beta * (logp - logp_ref)`` not detached,
then RLOO's leave-one-out baseline or a group's mean subtracted, or advantages normalised by the
batch's mean and standard deviation).  REINFORCE's gradient is ``A_i * dlogp_i`` with ``A`` held
constant (Williams 1992; RLOO: Ahmadian et al. 2024, "Back to Basics"); the kept graph adds
``sum_i logp_i * dA_i``, which pulls each sample's log-probability by the others'.  The values
are right (on the first step, where the policy is the reference, exactly) and every gradient is
finite and nonzero.

Read at the ``backward()`` call from a loss's first nodes, before the backward frees what they
saved: a product (``MulBackward0``) of two operands that both carry gradient, of one shape
with at least two entries, one of them the log-probability of picked entries (it reaches a
``log_softmax`` through ``gather``, sums, squeezes and views only).  Its dependence on the other
samples is measured, not guessed: the gradient of the weight's first entry with
respect to the ``log_softmax``'s saved output (``torch.autograd.grad`` unwrapped, so the watch's
own listeners are not told; ``retain_graph=True``, so the user's backward runs as before),
nonzero in another sample's rows (dimension 0).  A weight that depends on its own sample only
(a focal loss's ``(1 - p)^gamma``) is not named.

Imports ``trace.graph.nodes`` only.
"""

from __future__ import annotations

import inspect
from typing import Any, NamedTuple

import torch

from ..graph.nodes import MOVES, reach, saved_value

__all__ = ["ScoreWeight", "score_weight"]

_LOGP_PATH = MOVES | {"GatherBackward0", "SumBackward1", "SumBackward0", "SqueezeBackward1",
                      "SqueezeBackward0", "SqueezeBackward4", "UnsqueezeBackward0",
                      "IndexBackward0", "SelectBackward0", "NegBackward0"}
_SLOTS = ("_saved_self", "_saved_other")


class ScoreWeight(NamedTuple):
    """``samples``: the weight's entries, one per row (dimension 0) of the log-softmax;
    ``reads``: how many other samples its first entry depends on."""

    samples: int
    reads: int


def _log_softmax_of(node: Any) -> Any:
    if type(node).__name__ == "LogSoftmaxBackward0":
        return node
    return reach(node, ("LogSoftmaxBackward0",), _LOGP_PATH, 8)


def score_weight(walked: list[Any]) -> ScoreWeight | None:
    """The first product among ``walked`` (a loss's first autograd nodes) of a log-probability
    and a weight computed from the log-probabilities of other samples with its graph kept, as
    a :class:`ScoreWeight`; ``None``: none."""
    grad = inspect.unwrap(torch.autograd.grad)
    for n in walked:
        if type(n).__name__ != "MulBackward0" or len(n.next_functions) != 2:
            continue
        sides = [c for c, _ in n.next_functions]
        if any(c is None for c in sides):
            continue
        for logp_slot in (0, 1):
            ls = _log_softmax_of(sides[logp_slot])
            if ls is None:
                continue
            weight = saved_value(n, _SLOTS[1 - logp_slot], hooked=False)  # the other operand
            logp = saved_value(n, _SLOTS[logp_slot], hooked=False)
            probs = saved_value(ls, "_saved_result", hooked=False)
            if not (isinstance(weight, torch.Tensor) and isinstance(logp, torch.Tensor)
                    and isinstance(probs, torch.Tensor) and weight.requires_grad
                    and weight.shape == logp.shape and weight.numel() >= 2
                    and probs.dim() >= 1 and probs.shape[0] >= 2
                    and weight.is_floating_point()):
                continue
            flat = weight.reshape(-1)
            rows = probs.shape[0]
            if flat.numel() != rows:
                continue  # one weight per row of the log-softmax: samples
            try:  # the first sample's weight against every sample's log-probabilities
                (g,) = grad(flat[0], probs, retain_graph=True, allow_unused=True)
            except RuntimeError:
                continue
            if g is not None and (reads := int((g.detach().reshape(rows, -1)[1:] != 0)
                                               .any(1).sum())):
                return ScoreWeight(rows, reads)
    return None
