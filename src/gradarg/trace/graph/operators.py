"""What the trace room knows about each operation: one row per operator, nothing elsewhere.

A row is keyed by the operation's name as :func:`~gradarg.trace.graph.nodes.op_name` reads it from a
backward node (``MulBackward0`` -> ``"mul"``) and says, where it applies: the label of a named
node (``c = 8 * b``), the local derivative the player shows, where the derivative is zero or
infinite, whether it can send exact zeros (a gate), whether its forward is random.  The
tracer, the player and the diagnosis read these rows and nothing else about operations; an
operation without a row is shown by its name and gets no special diagnosis.

A new operator is one row of :data:`OPERATORS`; ``tests/trace/test_operators.py`` checks every
row against torch (the rule against autograd on a small input, the stated regions).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from .nodes import constant_exponent, node_class, op_name, saved_value

__all__ = ["OPERATORS", "Operator", "described", "factors", "outside_domain", "row",
           "singular"]


@dataclass(frozen=True)
class Operator:
    """One operation, as the trace room shows and diagnoses it.

    Attributes
    ----------
    name : str
        The operation, as :func:`~gradarg.trace.graph.nodes.op_name` reads it (``"mul"``).
    label : str or None
        Expression over the node's inputs (``"{0} * {1}"``), for a node the caller named.
    constant_first : bool
        With a known constant as second operand, show it first (``8 * b``: torch records
        ``mul(b, 8)``).
    rule : str or None
        What its backward does to the upstream gradient ``g``, in words a reader can check.
    zero_derivative : bool
        A step function: the derivative is zero almost everywhere.
    singular : str or None
        Where the derivative is infinite or undefined.
    domain : str or None
        Where its value is a number for a real input ``x`` (``"x ≥ 1"``): outside it the
        forward gives NaN.  Written so that it reads as a condition on ``x`` (``|x|`` for
        the absolute value); ``tests/trace/test_operators.py`` evaluates it against torch.
    regular_from_exponent : float or None
        With a constant exponent at least this, the derivative is finite everywhere (``pow``).
    gate : str or None
        Where it sends exact zeros although ``g`` is nonzero (a ReLU, a mask).
    dead_unit : bool
        A zero gradient through it is a unit that never fired (a dead ReLU).
    saturates : bool
        A clamp: its derivative is zero wherever the input lies outside its range, so a zero
        gradient through it is a saturated clamp.
    limits : tuple of float
        A smooth squashing function whose output rounds to exactly these values far from 0,
        where its derivative (computed from the output) is then exactly 0 in floating point:
        ``sigmoid`` (0, 1), ``tanh`` (−1, 1).
    zero_at_zero : bool
        Its gradient is exactly 0 at an all-zero input (torch's subgradient of a norm at 0).
    overflows : str or None
        Where its forward overflows to ``inf`` for finite inputs (``exp``): an infinite value
        that a backward then multiplies by, or that ``torch.where`` masks, makes NaN.
    masks_branch : bool
        Sends a zero cotangent into the branch it did not take (``torch.where``).
    product : bool
        Its backward multiplies ``g`` by the other (saved) factor: a saved factor of 0 and one
        other value is a dropout mask; a non-finite factor makes NaN from a zero ``g``.
    fix_in_product : str or None
        The safer form when a product's backward multiplies by this operation's non-finite
        value (``p * log(p)`` at ``p = 0``).
    random : bool
        The forward draws random numbers (dropout in training mode, a random draw).
    view : bool
        A view of its input (no arithmetic): looked through when finding the module a value
        goes into.
    operands : tuple of str
        A product: for each input, by position in ``next_functions``, the saved attribute
        that holds its operand (``"_saved_other"``), or ``""`` for an input that is added, not
        multiplied (``addmm``'s bias).  The gradient sent to a multiplied input is ``g`` times
        the other multiplied operands (:func:`factors`), so an all-zero operand sends exact
        zeros to the others.
    keeps_zero : bool
        Its output is all zero when its (first) input is: a view, a copy, a negation, a sum.
    routes : bool
        Joins several inputs without arithmetic (``cat``, ``stack``): its backward only cuts
        ``g`` into the inputs' parts, so a part it sends is all zeros exactly when those
        entries of ``g`` arrived as zeros: it passes zeros on, another node made them.
    recompute : tuple of str
        How to compute its forward output again from what its node saved: the ``torch``
        function's name (dotted below ``torch``: ``"linalg.slogdet"``), then the saved
        attributes it takes (``("log", "_saved_self")``), for an operation whose output no
        node keeps (where a NaN made in the forward starts; a tuple output is non-finite when
        one of its floating tensors is).
    """

    name: str
    label: str | None = None
    constant_first: bool = False
    rule: str | None = None
    zero_derivative: bool = False
    singular: str | None = None
    domain: str | None = None
    regular_from_exponent: float | None = None
    gate: str | None = None
    dead_unit: bool = False
    saturates: bool = False
    limits: tuple[float, ...] = ()
    zero_at_zero: bool = False
    overflows: str | None = None
    masks_branch: bool = False
    product: bool = False
    fix_in_product: str | None = None
    random: bool = False
    view: bool = False
    operands: tuple[str, ...] = ()
    keeps_zero: bool = False
    routes: bool = False
    recompute: tuple[str, ...] = ()


_MATMUL = "g @ Bᵀ to A, Aᵀ @ g to B"
_RESHAPED = "g reshaped to the input's shape"
_NEAR_ZERO_P = "a coordinate near 0 when p < 1 (the derivative grows without bound there)"
_ONE_ELEMENT = "a single element (n − 1 = 0 with the default correction)"

OPERATORS: dict[str, Operator] = {op.name: op for op in (
    # arithmetic
    Operator("mul", label="{0} * {1}", constant_first=True, rule="g × the other factor",
             gate="where the other factor is 0", product=True,
             operands=("_saved_self", "_saved_other")),
    Operator("add", label="{0} + {1}", rule="g passed on unchanged to each operand"),
    Operator("sub", label="{0} - {1}", rule="g to the first operand, −g to the second"),
    Operator("rsub", label="{1} - {0}", rule="−g to the first operand, g to the second"),
    Operator("neg", label="-{0}", rule="−g", keeps_zero=True),
    Operator("div", label="{0} / {1}", rule="g / b to a, −g·a / b² to b", singular="b = 0",
             recompute=("div", "_saved_self", "_saved_other")),
    Operator("pow", label="{0} ** {1}", rule="g × n·xⁿ⁻¹",
             singular="x = 0 with an exponent below 1", regular_from_exponent=1,
             recompute=("pow", "_saved_self", "_saved_exponent")),
    Operator("reciprocal", singular="x = 0"),
    Operator("xlogy", singular="y = 0 (for x ≠ 0)",
             recompute=("xlogy", "_saved_self", "_saved_other")),
    Operator("atan2", singular="(y, x) near (0, 0) (the derivative grows as 1 / r)"),
    # products
    Operator("mm", label="{0} @ {1}", rule=_MATMUL, operands=("_saved_self", "_saved_mat2")),
    Operator("matmul", label="{0} @ {1}", rule=_MATMUL),
    Operator("bmm", label="{0} @ {1}", operands=("_saved_self", "_saved_mat2")),
    Operator("mv", label="{0} @ {1}", rule="g ⊗ x to W (an outer product), Wᵀ g to x",
             operands=("_saved_self", "_saved_vec")),
    Operator("dot", label="{0} @ {1}", operands=("_saved_self", "_saved_tensor")),
    Operator("addmm", label="{1} @ {2} + {0}",
             rule="to the bias: g summed over the rows; to A: g @ Bᵀ; to B: Aᵀ @ g "
                  "(y = bias + A @ B)", operands=("", "_saved_mat1", "_saved_mat2")),
    Operator("addmv", operands=("", "_saved_mat", "_saved_vec")),
    Operator("baddbmm", operands=("", "_saved_batch1", "_saved_batch2")),
    Operator("convolution", operands=("_saved_input", "_saved_weight", "")),
    Operator("cdist", singular=_NEAR_ZERO_P),
    # elementwise
    Operator("exp", rule="g × exp(x)",
             overflows="x above about 88.7 in float32, 709.8 in float64"),
    Operator("log", rule="g / x", singular="x = 0", domain="x ≥ 0",
             fix_in_product="for p * log(p) use torch.special.xlogy(p, p), which is 0 at p = 0",
             recompute=("log", "_saved_self")),
    Operator("log2", singular="x = 0", domain="x ≥ 0", recompute=("log2", "_saved_self")),
    Operator("log10", singular="x = 0", domain="x ≥ 0", recompute=("log10", "_saved_self")),
    Operator("sqrt", rule="g / (2√x)", singular="x = 0", domain="x ≥ 0"),
    Operator("log1_p", singular="x = -1", domain="x ≥ -1", recompute=("log1p", "_saved_self")),
    Operator("linalg_slogdet", singular="a singular matrix (det = 0: log|det| = -inf)",
             recompute=("linalg.slogdet", "_saved_A")),
    Operator("rsqrt", singular="x = 0", domain="x ≥ 0"),
    Operator("sin", rule="g × cos(x)"),
    Operator("cos", rule="−g × sin(x)"),
    Operator("asin", singular="x = ±1", domain="|x| ≤ 1", recompute=("asin", "_saved_self")),
    Operator("acos", singular="x = ±1", domain="|x| ≤ 1", recompute=("acos", "_saved_self")),
    Operator("atanh", singular="x = ±1", domain="|x| ≤ 1", recompute=("atanh", "_saved_self")),
    Operator("acosh", singular="x = 1", domain="x ≥ 1", recompute=("acosh", "_saved_self")),
    Operator("tanh", rule="g × (1 − tanh²(x))", limits=(-1.0, 1.0)),
    Operator("sigmoid", rule="g × σ(x)(1 − σ(x))", limits=(0.0, 1.0)),
    # gates: they send exact zeros
    Operator("relu", rule="g where x > 0, else 0", gate="x ≤ 0", dead_unit=True),
    Operator("threshold", gate="x ≤ the threshold", dead_unit=True),
    Operator("leaky_relu", dead_unit=True),
    Operator("threshold_backward", dead_unit=True),  # the backward of relu, differentiated
    Operator("leaky_relu_backward", dead_unit=True),
    Operator("hardtanh", gate="x outside [min, max]", saturates=True),
    Operator("clamp", gate="x outside [min, max]", saturates=True),
    Operator("where", gate="the branch not taken", masks_branch=True),
    Operator("masked_fill", gate="the masked entries"),
    Operator("max", gate="every entry but the maximum"),
    Operator("min", gate="every entry but the minimum"),
    Operator("index", gate="the entries not indexed", keeps_zero=True),
    # step functions
    Operator("round", zero_derivative=True),
    Operator("floor", zero_derivative=True),
    Operator("ceil", zero_derivative=True),
    Operator("trunc", zero_derivative=True),
    Operator("sign", zero_derivative=True),
    Operator("sgn", zero_derivative=True),
    # reductions
    Operator("sum", rule="g copied to every summed entry", keeps_zero=True),
    Operator("mean", rule="g / n copied to every averaged entry", keeps_zero=True),
    Operator("norm", singular=_NEAR_ZERO_P, zero_at_zero=True),
    Operator("linalg_vector_norm", singular=_NEAR_ZERO_P, zero_at_zero=True),
    Operator("logsumexp", singular="a row whose entries are all -inf (-inf - (-inf) is NaN)"),
    Operator("std", singular=_ONE_ELEMENT),
    Operator("var", singular=_ONE_ELEMENT),
    # moves and views
    Operator("t", label="{0}.T", rule="gᵀ", view=True, keeps_zero=True),
    Operator("transpose", label="{0}.T", rule="g transposed back", keeps_zero=True),
    Operator("permute", label="{0}.permute", rule="g permuted back", keeps_zero=True),
    Operator("view", rule=_RESHAPED, view=True, keeps_zero=True),
    Operator("unsafe_view", rule=_RESHAPED, keeps_zero=True),
    Operator("squeeze", keeps_zero=True),
    Operator("unsqueeze", keeps_zero=True),
    Operator("expand", rule="g summed over the expanded dimensions", view=True,
             keeps_zero=True),
    Operator("clone", rule="g passed on unchanged", keeps_zero=True),
    Operator("cat", rule="g cut into the inputs' parts", routes=True),
    Operator("stack", rule="g cut into the inputs' slices", routes=True),
    # random forwards
    Operator("native_dropout", random=True),
    Operator("fused_dropout", random=True),
    Operator("bernoulli", random=True),
    Operator("rrelu_with_noise", random=True),
    Operator("normal", random=True),
)}
"""Every operator the trace room knows, by name."""

_NONE = Operator("")


def row(op: str) -> Operator:
    """The row of operation ``op``; an empty row (no label, rule or region) if it has none."""
    return OPERATORS.get(op, _NONE)


def factors(op: str, slot: int) -> tuple[int, ...]:
    """The inputs of product ``op`` whose operands multiply the gradient sent to input ``slot``
    (none for an added input, or for an operation that is not a product).

    >>> factors("mul", 0), factors("addmm", 2)
    ((1,), (1,))
    >>> factors("addmm", 0), factors("relu", 0)  # added bias; no product
    ((), ())
    """
    operands = row(op).operands
    if slot >= len(operands) or not operands[slot]:
        return ()
    return tuple(j for j, attr in enumerate(operands) if attr and j != slot)


def described(node: Any) -> tuple[str, str]:
    """``node``'s operation and class (``"log (LogBackward0)"``), and what its row and its
    saved values say about where the value was made: the entries of its input outside its
    domain (:func:`outside_domain`), else where its derivative is infinite (``""``: neither
    stated)."""
    op = row(op_name(node))
    if op.domain and (k := outside_domain(node)) is not None:
        where = (f"where {k[0]} of {k[1]} entries of its input lie outside its domain "
                 f"{op.domain} (its value is NaN there)")
    else:
        where = f"whose derivative is infinite at {op.singular}" if op.singular else ""
    return f"{op_name(node)} ({node_class(node)})", where


def outside_domain(node: Any) -> tuple[int, int] | None:
    """``(k, n)``: ``k`` of the ``n`` entries of ``node``'s forward output are NaN while its
    input is not (its row's :attr:`Operator.domain`), read from its saved result or computed
    again from its saved input (:attr:`Operator.recompute`); ``None`` when none is, or the
    values cannot be read.  Reads no value saved through saved-tensor hooks."""
    op = row(op_name(node))
    if not op.domain:
        return None
    if op.recompute:
        x = saved_value(node, op.recompute[1], hooked=False)
        if not isinstance(x, torch.Tensor):
            return None
        with torch.no_grad():
            out = getattr(torch, op.recompute[0])(x.detach())
        bad = out.isnan() & ~x.isnan()
    else:  # sqrt, rsqrt: their node keeps the result
        out = saved_value(node, "_saved_result", hooked=False)
        if not isinstance(out, torch.Tensor):
            return None
        bad = out.isnan()
    k = int(bad.sum())
    return (k, out.numel()) if k else None


def singular(node: Any) -> bool:
    """Whether the derivative of ``node``'s operation is infinite somewhere it can be
    evaluated: its row states a region, and no constant exponent rules it out (``x ** 2``)."""
    op = row(op_name(node))
    if op.singular is None:
        return False
    if op.regular_from_exponent is not None:
        exponent = constant_exponent(node)
        return not (isinstance(exponent, (int, float)) and exponent >= op.regular_from_exponent)
    return True
