"""Where a loss that is NaN or infinite came from, read from the saved values of its first
autograd nodes at the ``backward()`` call: a node whose input is outside its function's domain
(``log`` of a negative number: NaN where the derivative ``1/x`` is finite), one that overflowed
or took a zero (``exp`` to inf, ``log(0)``), or a saved operand without autograd history that
already held NaN/Inf (returns normalised by a zero standard deviation, a target, the data).

Imports ``trace.graph``'s ``saved``, ``saved_value`` and ``finite`` only.
"""

from __future__ import annotations

from typing import Any

import torch

from ..graph.nodes import saved, saved_value
from ..graph.values import finite

__all__ = ["nan_source"]


def _saved(node: Any, attr: str) -> Any:
    return saved_value(node, attr, hooked=False)  # no unpack hook run (see observed._saved)


# nodes whose value is NaN outside their input's domain while their derivative is finite
# there: (saved input, test of the entries outside the domain, what they are)
_DOMAIN: dict[str, tuple[str, Any, str]] = {
    "LogBackward0": ("_saved_self", lambda x: x < 0, "log of {k} negative entries"),
    "Log2Backward0": ("_saved_self", lambda x: x < 0, "log2 of {k} negative entries"),
    "Log10Backward0": ("_saved_self", lambda x: x < 0, "log10 of {k} negative entries"),
    "Log1PBackward0": ("_saved_self", lambda x: x < -1, "log1p of {k} entries below -1"),
    "SqrtBackward0": ("_saved_result", torch.isnan, "sqrt of {k} negative entries"),
    "AcosBackward0": ("_saved_self", lambda x: x.abs() > 1, "acos of {k} entries beyond ±1"),
    "AsinBackward0": ("_saved_self", lambda x: x.abs() > 1, "asin of {k} entries beyond ±1"),
    "AtanhBackward0": ("_saved_self", lambda x: x.abs() > 1, "atanh of {k} entries beyond ±1"),
}

# nodes whose value is infinite where their derivative is too: (saved value, test, what)
_INFINITE: dict[str, tuple[str, Any, str]] = {
    "LogBackward0": ("_saved_self", lambda x: x == 0, (
        "log of {k} of {n} entries equal to 0 (-inf): a value that underflowed to 0, such as a "
        "sum of densities or probabilities, gives -inf; compute it in log space (logsumexp of "
        "log-densities)")),
    "ExpBackward0": ("_saved_result", torch.isinf, (
        "exp overflowed to inf in {k} of {n} entries: scale the inputs so that what exp reads "
        "stays in range, or keep the loss in log space")),
}


def nan_source(walked: list[Any]) -> str:
    """The first node of ``walked`` (a NaN/Inf loss's nodes, :func:`~gradarg.trace.graph.nodes.first_nodes`) whose saved input
    has entries outside its function's domain (``log`` of a negative number...), as
    ``"log of 4 negative entries (LogBackward0)"``; ``""``: none found.  Such a node's value
    is NaN where its derivative (``1/x`` for ``log``) is finite: a NaN loss, finite
    gradients."""
    for n in walked:
        for rule in (_DOMAIN.get(type(n).__name__), _INFINITE.get(type(n).__name__)):
            x = _saved(n, rule[0]) if rule is not None else None
            if rule is None or not isinstance(x, torch.Tensor) or not x.is_floating_point():
                continue
            k = int(rule[1](x.detach()).sum())
            if k:
                return rule[2].format(k=k, n=x.numel()) + f" ({type(n).__name__})"
    return _nonfinite_operand(walked)


def _nonfinite_operand(walked: list[Any]) -> str:
    """The first saved operand of ``walked`` that has no autograd history and holds NaN/Inf
    (``_saved_*`` attributes that are inputs, not results): a value computed outside the
    graph (returns, weights, targets, the data) that brought the NaN/Inf in; ``""``: none."""
    for n in walked:
        found = []  # the largest first: an input (weight) before a total made of it
        for attr, x, err in saved(n, hooked=False):
            if (err is None and not attr.startswith("_saved_result")
                    and isinstance(x, torch.Tensor) and not x.requires_grad
                    and x.is_floating_point() and x.numel() <= 1 << 20 and not finite(x)):
                found.append(x)
        if found:
            x = max(found, key=lambda t: t.numel())
            k = int((~torch.isfinite(x)).sum())
            return (f"{type(n).__name__} took a tensor without autograd history (shape "
                    f"{tuple(x.shape)}) holding NaN/Inf in {k} of {x.numel()} entries "
                    f"(observed: the operand it saved): a value computed outside the graph, "
                    f"with no gradient, brought it in (returns or advantages normalised by "
                    f"their standard deviation are 0/0 when it is 0; a target; the data)")
    return ""
