"""Where an operation's derivative is infinite, located on the values its node saved.

:attr:`gradarg.trace.graph.operators.Operator.singular` says in words where an operation's
derivative is infinite (``div``: ``b = 0``).  This module checks it on the live node: for the
operations below, which entries of the saved input (or output) sit exactly at such a point,
so that a diagnosis can say "the divisor is exactly 0 at 4 of 4 entries" instead of listing
every possible cause.  Each check reads one saved value; values saved through saved-tensor
hooks are not read.

Imports :func:`gradarg.trace.graph.nodes.saved_value`, ``op_name`` and
:func:`gradarg.trace.graph.values.dense_values` only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import torch

from .nodes import op_name, saved_value
from .values import dense_values

__all__ = ["Singular", "at_singular", "checked_value"]


class Singular(NamedTuple):
    """``entries`` of the ``total`` entries of the saved value sit at a point where the
    derivative is infinite (or the value is already NaN): ``text`` says so with the counts and
    what to do."""

    entries: int
    total: int
    text: str


class _Check(NamedTuple):
    attr: str  # the saved value read
    test: Callable[[torch.Tensor], torch.Tensor]  # the entries at a singular point
    what: str  # what they are
    fix: str  # what to do
    applies: Callable[[Any], bool] | None = None  # a condition on the node
    why: str = "where its derivative is infinite"


def _exponent_below_one(node: Any) -> bool:
    e = saved_value(node, "_saved_exponent", hooked=False)
    return isinstance(e, (int, float)) and not isinstance(e, bool) and e < 1


_EPS_INPUT = "add eps to the input"
_UNIT = "clamp the input to [-1 + eps, 1 - eps]"
_CHECKS: dict[str, _Check] = {
    "div": _Check("_saved_other", lambda b: b == 0, "the divisor is exactly 0",
                  fix=("add a small eps to the divisor, or leave those entries out (a constant "
                       "input has standard deviation 0: x.std() + eps)")),
    "log": _Check("_saved_self", lambda x: x == 0, "log's input is exactly 0",
                  fix=("clamp the input (clamp(min=eps)), or use log_softmax / logsigmoid / "
                       "BCEWithLogitsLoss instead of the log of a probability that "
                       "underflowed")),
    "sqrt": _Check("_saved_result", lambda r: r == 0, "sqrt's input is exactly 0",
                   fix=("add eps inside the square root, or use torch.linalg.vector_norm, "
                        "whose gradient at 0 is 0")),
    "rsqrt": _Check("_saved_result", torch.isinf, "rsqrt's input is exactly 0", _EPS_INPUT),
    "reciprocal": _Check("_saved_result", torch.isinf, "reciprocal's input is exactly 0",
                         _EPS_INPUT),
    "pow": _Check("_saved_self", lambda x: x == 0, "the base of a power below 1 is exactly 0",
                  "add eps to the base", _exponent_below_one),
    "acos": _Check("_saved_self", lambda x: x.abs() == 1, "acos's input is exactly ±1",
                   fix=(f"{_UNIT} (a cosine similarity of 1 between identical vectors lands "
                        f"there)")),
    "asin": _Check("_saved_self", lambda x: x.abs() == 1, "asin's input is exactly ±1", _UNIT),
    "atanh": _Check("_saved_self", lambda x: x.abs() == 1, "atanh's input is exactly ±1",
                    _UNIT),
    "acosh": _Check("_saved_self", lambda x: x == 1, "acosh's input is exactly 1",
                    "clamp the input to at least 1 + eps"),
    "log_softmax": _Check("_saved_result", torch.isnan,
                          what=("its output is NaN (a row of its input is -inf in every "
                                "entry: every class masked out)"),
                          fix=("mask with a large finite negative value "
                               "(torch.finfo(dtype).min) instead of -inf, or leave fully "
                               "masked rows out of the loss"),
                          why="and its backward carries that NaN on"),
}


def checked_value(node: Any) -> str | None:
    """Which value of ``node`` its check reads (``"_saved_self"``: the first input,
    ``"_saved_other"``: the second, ``"_saved_result"``: the output), or ``None`` when its
    operation has no check here or the check does not apply (a power of 2)."""
    check = _CHECKS.get(op_name(node))
    if check is None or (check.applies is not None and not check.applies(node)):
        return None
    return check.attr


def at_singular(node: Any, value: Any = None,
                source: str = "read from the values it saved") -> Singular | None:
    """The entries of ``node``'s saved value at a point where its derivative is infinite,
    for the operations this module knows; ``None`` when there are none, the operation is not
    one of them, or the value cannot be read.  ``value``: that value read elsewhere (a live
    tensor equal to it, once ``backward()`` freed what the node saved), and ``source`` how the
    text says it was read."""
    check = _CHECKS.get(op_name(node))
    if check is None or (check.applies is not None and not check.applies(node)):
        return None
    if value is None:
        value = saved_value(node, check.attr, hooked=False)
    if not isinstance(value, torch.Tensor) or value.is_complex() or not value.numel() \
            or value.layout != torch.strided:
        return None
    if value.is_nested:  # the components' entries, one after the other
        value = dense_values(value)
    with torch.no_grad():
        count = int(check.test(value.detach()).sum())
    if not count:
        return None
    return Singular(count, value.numel(), (
        f"{check.what} at {count} of {value.numel()} entries ({source}), {check.why}; "
        f"{check.fix}"))
