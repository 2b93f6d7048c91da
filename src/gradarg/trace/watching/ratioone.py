"""A ratio that is exactly 1 in every entry while both of its sides carry gradient, read from
the saved values of a loss's first autograd nodes at the ``backward()`` call:
``exp(a - b)`` (PPO's probability ratio ``exp(logp - old_logp)``) or ``a / b``.  With ``b``
the same value as ``a`` computed with its graph (the rollout's log-probabilities kept without
``detach``), the derivative of ``a - b`` is ``da - db``: the two paths send opposite
gradients to the same parameters and cancel (exactly, when ``b`` is ``a`` computed again by
the same weights), so the policy gradient is zero whatever the advantages.

Imports :func:`gradarg.trace.graph.nodes.saved_value` only.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import torch

from ..graph.nodes import saved_value

__all__ = ["RATIOS", "RatioOne", "ratio_of_equals"]

RATIOS = ("ExpBackward0", "DivBackward0")  # the nodes read


class RatioOne(NamedTuple):
    """``form``: ``"exp(a - b)"`` or ``"a / b"``; ``shape``: the ratio's shape."""

    form: str
    shape: tuple[int, ...]


def _both_live(node: Any) -> bool:
    edges = node.next_functions
    return len(edges) == 2 and all(c is not None for c, _ in edges)


def ratio_of_equals(node: Any) -> RatioOne | None:
    """For ``exp(a - b)`` (an ``ExpBackward0`` over a ``SubBackward0``, its saved result) or
    ``a / b`` (a ``DivBackward0``, its saved operands) with both ``a`` and ``b`` carrying
    gradient and the ratio exactly 1 in every entry (at least two), :class:`RatioOne`; else
    ``None``."""
    name = type(node).__name__
    if name == "ExpBackward0" and len(node.next_functions) == 1:
        sub = node.next_functions[0][0]
        out = saved_value(node, "_saved_result", hooked=False)
        if type(sub).__name__ != "SubBackward0" or not _both_live(sub):
            return None
        form = "exp(a - b)"
    elif name == "DivBackward0" and _both_live(node):
        a, b = (saved_value(node, x, hooked=False) for x in ("_saved_self", "_saved_other"))
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)
                and a.shape == b.shape):
            return None
        out, form = a.detach() / b.detach(), "a / b"
    else:
        return None
    if not (isinstance(out, torch.Tensor) and out.is_floating_point() and out.numel() > 1):
        return None
    return RatioOne(form, tuple(out.shape)) if bool((out == 1).all()) else None
