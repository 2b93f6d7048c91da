"""Where a loss that is NaN or infinite came from, read from the saved values of its first
autograd nodes at the ``backward()`` call: a node whose input is outside its function's domain
(``log`` of a negative number: NaN where the derivative ``1/x`` is finite), one that overflowed
or took a zero (``exp`` to inf, ``log(0)``, ``0 * log(0)`` in an entropy ``p * log(p)``, a cross-entropy over logits masked to -inf at
the target or in a whole row), or a saved operand without autograd history that
already held NaN/Inf (returns normalised by a zero standard deviation, a target, the data), or
a mean over nothing: a reduction that averaged an empty tensor, or a division by a count that is
0 (an empty batch, a selection that kept no example).

Imports ``trace.graph``'s ``saved``, ``saved_value`` and ``finite`` only.
"""

from __future__ import annotations

from typing import Any

import torch

from ..graph.nodes import saved, saved_value
from ..graph.values import finite

__all__ = ["EMPTY", "GRAPHLESS", "MASKED", "ZERO_LOG", "nan_source"]


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

# nodes that read a value which overflowed before them: (saved input, test, what)
_OVERFLOWED: dict[str, tuple[str, Any, str]] = {
    "LogBackward0": ("_saved_self", lambda x: x == float("inf"), (
        "log of {k} of {n} entries equal to +inf: its input overflowed, a product, sum or exp "
        "of finite values beyond the dtype's largest value (a forward algorithm or partition "
        "function multiplied out in probability space over many steps), so the loss is inf "
        "(and what is computed from it inf or NaN); compute it in log space (logsumexp of "
        "log-scores)")),
}


# the words every "mean over nothing" source states (read by the finding that words the fix)
EMPTY = "a mean over 0 entries is 0 / 0 = NaN"
MASKED = "cross_entropy read logits that are -inf"  # at targets or whole rows (_masked_logits)
ZERO_LOG = "0 * log 0 = 0 * (-inf) = NaN"  # a product p * log(p) at p = 0 (_zero_times_log)
MASKED_PRODUCT = "0 * -inf = NaN"  # a 0 target times a -inf-masked log_softmax (_zero_times_masked)
GRAPHLESS = "one operand of the loss's sum"  # a term without autograd history (_graphless_term)
_SUMS = ("AddBackward0", "SubBackward0")
_SCALES = ("MulBackward0", "DivBackward0", "NegBackward0", "MeanBackward0", "SumBackward0")
_MEAN = 1  # the ``reduction`` a loss node saves for ``reduction="mean"``


def _empty_mean(node: Any) -> str:
    """``node`` averaged an empty tensor (a mean over 0 entries: 0 / 0) or divided by a
    count without autograd history that holds 0: what it is, or ``""``."""
    name = type(node).__name__
    if name in ("MeanBackward0", "MeanBackward1"):
        sizes = _saved(node, "_saved_self_sym_sizes")
        dims = _saved(node, "_saved_dim") if name == "MeanBackward1" else None
        if not isinstance(sizes, tuple) or not sizes:
            return ""
        read = (range(len(sizes)) if not dims else
                [d % len(sizes) for d in dims if isinstance(d, int)])
        shape = tuple(int(v) for v in sizes)
        if not any(shape[d] == 0 for d in read):
            return ""
    elif _saved(node, "_saved_reduction") == _MEAN:
        x = _saved(node, "_saved_self")
        if not isinstance(x, torch.Tensor) or x.numel() != 0:
            return ""
        shape = tuple(x.shape)
    elif name == "DivBackward0":
        d = _saved(node, "_saved_other")
        if (not isinstance(d, torch.Tensor) or d.requires_grad or d.is_complex()
                or d.numel() > 1 << 20):
            return ""
        k = int((d == 0).sum())
        if not k:
            return ""
        return (f"DivBackward0 divided by 0 in {k} of {d.numel()} entries (observed: the divisor "
                f"it saved, without autograd history): 0 / 0 is NaN and x / 0 is ±inf, so "
                f"{EMPTY} when the divisor counts selected examples (an all-False mask, an "
                f"empty batch); skip the step when the count is 0, or divide by max(count, 1)")
    else:
        return ""
    return (f"{name} averaged an empty tensor of shape {shape} (observed: the shape it saved): "
            f"{EMPTY}, and with no entry to come from, every gradient through it is exactly "
            f"zero; an empty batch or a selection that kept no example (a count such as "
            f"int(0.8 * 1) = 0, an all-False mask): skip the step when nothing is selected, or "
            f"keep at least one example")


def _zero_times_log(node: Any) -> str:
    """``node`` multiplies ``log(x)`` by a factor that is 0 where ``x`` is 0 (``p * log(p)``):
    ``0 * -inf`` is NaN there; what it is, or ``""``."""
    if type(node).__name__ != "MulBackward0":
        return ""
    for i, (c, _) in enumerate(node.next_functions):
        if c is not None and type(c).__name__ == "LogSoftmaxBackward0":
            said = _zero_times_masked(c, _saved(node, ("_saved_other", "_saved_self")[i]))
            if said:
                return said
        if c is None or type(c).__name__ != "LogBackward0":
            continue
        x = _saved(c, "_saved_self")
        m = _saved(node, ("_saved_other", "_saved_self")[i])
        if (not isinstance(x, torch.Tensor) or not isinstance(m, torch.Tensor)
                or x.shape != m.shape or not x.is_floating_point()):
            continue
        zero = x.detach() == 0
        k = int((zero & (m.detach() == 0)).sum())
        if k:
            return (f"{ZERO_LOG} in {k} of {x.numel()} entries: a product "
                    f"p * log(p), an entropy or KL term, over values that are exactly 0 (observed: "
                    f"the log's saved input and the factor, both 0 there); exact zeros come from "
                    f"sparsemax or entmax, a ReLU, a mask or a clamp, not from an underflow; "
                    f"the gradients stay finite only because nothing sends gradient to those zeros "
                    f"(sparsemax's backward, for one, sends gradient only to its support); use torch.special.xlogy(p, p), 0 "
                    f"where p is 0, or log(p + eps) (MulBackward0)")
    return ""


def _zero_times_masked(log: Any, m: Any) -> str:
    """A factor ``m`` that is 0 where ``log_softmax``'s output is -inf (logits masked to -inf:
    illegal moves, padding), as in ``-(target * log_softmax(masked)).sum()``: what it is, or
    ``""``."""
    y = _saved(log, "_saved_result")
    if (not isinstance(y, torch.Tensor) or not isinstance(m, torch.Tensor)
            or y.shape != m.shape or not y.is_floating_point()):
        return ""
    k = int(((y.detach() == float("-inf")) & (m.detach() == 0)).sum())
    if not k:
        return ""
    return (f"{MASKED_PRODUCT} in {k} of {y.numel()} entries: a product target * "
            f"log_softmax(logits) whose logits were masked to -inf (illegal moves, padding) "
            f"where the target is 0 (observed: the log_softmax's saved output, -inf there, and "
            f"the factor, 0 there); mask with a large finite negative value "
            f"(torch.finfo(logits.dtype).min) instead of -inf, or take the product with "
            f"torch.where(target > 0, target * log_probs, 0) (MulBackward0)")


def _masked_logits(node: Any, walked: list[Any]) -> str:
    """``node`` (``nll_loss`` of ``log_softmax``) read rows whose every logit is -inf (NaN) or
    targets whose own logit is -inf: what it is, or ``""``."""
    if type(node).__name__ != "NllLossBackward0" or not node.next_functions:
        return ""
    log = node.next_functions[0][0]
    if log is None or type(log).__name__ != "LogSoftmaxBackward0":
        return ""
    out, target = _saved(log, "_saved_result"), _saved(node, "_saved_target")
    ignore = _saved(node, "_saved_ignore_index")
    if (not isinstance(out, torch.Tensor) or not isinstance(target, torch.Tensor)
            or out.dim() != 2 or target.shape != out.shape[:1] or target.is_floating_point()):
        return ""
    out, target = out.detach(), target.detach()
    keep = target != ignore if isinstance(ignore, int) else torch.ones_like(target, dtype=torch.bool)
    rows = int(torch.isnan(out[keep]).all(1).sum())  # rows the loss reads, not ignored ones
    picked = out[keep].gather(1, target[keep].clamp(0, out.shape[1] - 1)[:, None])
    at = int((picked == float("-inf")).sum())
    if not rows and not at:
        return ""
    seen = [(f"{rows} of {out.shape[0]} rows with every logit -inf (a softmax over nothing: "
            f"NaN)")] if rows else []
    seen += [(f"{at} of {out.shape[0]} targets whose own logit is -inf (log 0: the target "
             f"itself is hidden)")] if at else []
    fill = any(type(m).__name__ == "MaskedFillBackward0" for m in walked)
    how = "a masked_fill with -inf in its graph" if fill else "-inf in the logits"
    return (f"{MASKED}: {' and '.join(seen)} (observed: the log-probabilities and targets "
            f"its nodes saved; {how}); a mask hides the position the step is trained to pick, "
            f"or every position: hide only what is not allowed at that step (update a visited "
            f"mask after the step's target is scored) and keep at least one position per row "
            f"(NllLossBackward0)")


def nan_source(walked: list[Any]) -> str:
    """The first node of ``walked`` (a NaN/Inf loss's nodes, :func:`~gradarg.trace.graph.nodes.first_nodes`) whose saved input
    has entries outside its function's domain (``log`` of a negative number...), as
    ``"log of 4 negative entries (LogBackward0)"``, or that averaged an empty tensor or divided
    by a zero count (:data:`EMPTY`), or else a saved operand without history holding NaN/Inf,
    or else a sum of the loss with a term that has no graph (:data:`GRAPHLESS`); ``""``: none
    found.  Such a node's value
    is NaN where its derivative (``1/x`` for ``log``) is finite: a NaN loss, finite
    gradients."""
    for n in walked:
        empty = _empty_mean(n) or _zero_times_log(n) or _masked_logits(n, walked)
        if empty:
            return empty
        name = type(n).__name__
        for rule in (_DOMAIN.get(name), _INFINITE.get(name), _OVERFLOWED.get(name)):
            x = _saved(n, rule[0]) if rule is not None else None
            if rule is None or not isinstance(x, torch.Tensor) or not x.is_floating_point():
                continue
            k = int(rule[1](x.detach()).sum())
            if k:
                return rule[2].format(k=k, n=x.numel()) + f" ({type(n).__name__})"
    return _nonfinite_operand(walked) or _graphless_term(walked[:1])


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


def _graphless_term(roots: list[Any]) -> str:
    """The loss is a sum (``AddBackward0`` / ``SubBackward0``, through scalings and means,
    from ``roots``) one of whose two operands has no graph (observed: an edge without a node):
    a term computed outside the graph, with no gradient, whose NaN/Inf reaches the loss;
    ``""``: none among the first sixteen such nodes."""
    todo, seen = list(roots), 0
    while todo and seen < 16:
        n = todo.pop(0)
        seen += 1
        name, edges = type(n).__name__, [c for c, _ in n.next_functions]
        if name in _SUMS and len(edges) == 2 and None in edges:
            return (f"{GRAPHLESS} ({name}) has no autograd history (observed: an edge without a "
                    f"node) and no operation outside its domain was found among its first "
                    f"nodes: a term computed outside the graph (from argmax, integer counts, "
                    f".detach() or .item()) adds its value to the loss, NaN/Inf included, and "
                    f"sends no gradient; check that term's value")
        if name in _SUMS or name in _SCALES:
            todo.extend(c for c in edges if c is not None)
    return ""
