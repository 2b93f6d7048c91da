"""The rule registry: which rule answers an ATen operator, and the shared argument helpers.

A rule is a function ``rule(t, func, args, kwargs, outs) -> list[Dep | None]`` (``t`` the
tracing mode, :class:`~.mode.Tracer`; one entry per tensor output, ``None`` for no derivative),
registered for its operators with :func:`register` in the module of its family under
:mod:`.rules`.  Adding an operator is one name in one ``register`` call (or a new rule next to
it); the mode looks rules up here and never needs to change.  Lookup order: outputs without a
floating dtype have no derivative; dtype conversions pass their set on; an operator tagged
``torch.Tag.pointwise`` with one output takes the pointwise rule; then this registry; anything
else is refused with :func:`refusal`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from .sets import Dep, UnsupportedOpError

__all__ = ["BY_NAME", "CONSTANT", "RULES", "ZERO_SECOND_DERIVATIVE", "Rule", "bind", "dim_list", "floating",
           "leaves", "name", "ops", "refusal", "register", "tree_map", "value_dependent"]

aten = torch.ops.aten

Rule = Callable[..., list[Dep | None]]
RULES: dict[Any, Rule] = {}
FAMILY: dict[Any, str] = {}
BY_NAME: dict[str, Rule] = {}  # operators of other namespaces, defined lazily: "space.name"


def ops(*names: str) -> frozenset:
    """Overload packets (``aten.view``) by name; names this torch lacks are skipped."""
    return frozenset(getattr(aten, s) for s in names if hasattr(aten, s))


def register(*names: str, family: str) -> Callable[[Rule], Rule]:
    """Register the decorated rule for the ATen operators ``names`` (one place per operator)."""

    def add(rule: Rule) -> Rule:
        for packet in ops(*names):
            if packet in RULES:  # pragma: no cover - a registration bug, never silent
                raise RuntimeError(f"{packet} has two sparsity rules")
            RULES[packet] = rule
            FAMILY[packet] = family
        return rule

    return add


# outputs carry no derivative with respect to any input
CONSTANT = ops(

    "detach",
    "detach_copy",
    "zeros_like",
    "ones_like",
    "empty_like",
    "full_like",
    "rand_like",
    "randn_like",
    "randint_like",
    "bernoulli",
    "floor",
    "ceil",
    "round",
    "trunc",
    "sign",
    "sgn",
    "new_zeros",
    "new_ones",
    "new_empty",
    "new_full",
    "empty_strided",
    "fill",
    "fill_",
    "zero_",
    "zero",
)
# operators whose second derivatives vanish wherever they exist (linear or piecewise linear in
# their inputs that depend on x): hessian_sparsity marks no pair for them
ZERO_SECOND_DERIVATIVE = ops(

    "add",
    "sub",
    "neg",
    "where",
    "masked_fill",
    "clone",
    "copy",
    "copy_",
    "positive",
    "alias",
    "_to_copy",
    "lift_fresh_copy",
    "relu",
    "abs",
    "clamp",
    "clamp_min",
    "clamp_max",
    "maximum",
    "minimum",
    "fmax",
    "fmin",
    "hardtanh",
    "leaky_relu",
    "threshold",
    "sum",
    "mean",
    "nansum",
    "amax",
    "amin",
    "max",
    "min",
    "cumsum",
    "cummax",
    "cummin",
    "aminmax",
    "to",
)

LOCAL_PATTERN = "gradarg.sparsity_pattern(fn, x) finds a local pattern from dense Jacobians instead"


def refusal(func: Any, condition: str = "") -> UnsupportedOpError:
    """The error for an operator (under ``condition``) that has no sparsity rule."""
    return UnsupportedOpError(f"no sparsity rule for {name(func)}{condition}; {LOCAL_PATTERN}")


def value_dependent(what: str) -> UnsupportedOpError:
    """The error for a computation whose pattern would depend on the values of ``x``."""
    return UnsupportedOpError(f"{what}: the pattern would hold only for this x; {LOCAL_PATTERN}")


def name(func: Any) -> str:
    return str(func).replace("aten.", "torch.ops.aten.", 1)


def bind(func: Any, args: tuple, kwargs: dict) -> dict[str, Any]:
    """Arguments by schema name, defaults filled in."""
    out: dict[str, Any] = {}
    for i, a in enumerate(func._schema.arguments):
        if i < len(args):
            out[a.name] = args[i]
        elif a.name in kwargs:
            out[a.name] = kwargs[a.name]
        elif a.has_default_value():
            out[a.name] = a.default_value
        else:
            out[a.name] = None
    return out


def dim_list(dim: Any, ndim: int) -> list[int]:
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return list(range(ndim))
    dims_ = [dim] if isinstance(dim, int) else list(dim)
    return sorted({d % max(ndim, 1) for d in dims_}) if ndim else []


def floating(t: Any) -> bool:
    return isinstance(t, torch.Tensor) and (t.is_floating_point() or t.is_complex())


# An operator's arguments are tensors, numbers and (nested) lists, tuples and dicts of them:
# walked here with public Python only (torch.utils._pytree is private, and older torch lacks
# parts of it).
def leaves(tree: Any) -> list[Any]:
    """Every non-container value of ``tree``, depth first."""
    if type(tree) in (list, tuple) or (isinstance(tree, tuple) and hasattr(tree, "_fields")):
        return [leaf for item in tree for leaf in leaves(item)]
    if type(tree) is dict:
        return [leaf for item in tree.values() for leaf in leaves(item)]
    return [tree]


def tree_map(fn: Callable[[Any], Any], tree: Any) -> Any:
    """``tree`` with ``fn`` applied to every non-container value (same containers)."""
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):  # a named tuple
        return type(tree)(*(tree_map(fn, item) for item in tree))
    if type(tree) in (list, tuple):
        return type(tree)(tree_map(fn, item) for item in tree)
    if type(tree) is dict:
        return {k: tree_map(fn, v) for k, v in tree.items()}
    return fn(tree)
