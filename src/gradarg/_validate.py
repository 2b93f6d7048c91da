"""Argument checks shared by the public helpers: one clear message per misuse."""

from __future__ import annotations

import cmath
import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import torch

Inputs = torch.Tensor | Sequence[torch.Tensor]


def check_callable(name: str, fn: Any, what: str = "fn(x) -> y") -> None:
    """Refuse a ``fn`` that cannot be called, naming the argument and what was expected."""
    if not callable(fn):
        got = f"a tensor of shape {tuple(fn.shape)}" if isinstance(fn, torch.Tensor) else (
            type(fn).__name__)
        raise TypeError(f"{name} must be a function (or module) {what}, got {got}; "
                        f"pass the function itself, not its result")


def check_tensor(name: str, value: Any) -> torch.Tensor:
    """Return ``value`` if it is a tensor, else raise a ``TypeError`` naming ``name``."""
    if not isinstance(value, torch.Tensor):
        raise TypeError(
            f"{name} must be a torch.Tensor, got {type(value).__name__}; "
            f"wrap numbers or arrays with torch.tensor(..., dtype=torch.float64)"
        )
    return value


def check_differentiable_dtype(name: str, t: torch.Tensor) -> torch.Tensor:
    """Raise a ``TypeError`` unless ``t`` has a floating or complex dtype."""
    if not (t.is_floating_point() or t.is_complex()):
        raise TypeError(
            f"{name} has dtype {t.dtype}, which autograd cannot differentiate; "
            f"expected a floating dtype (torch.float32, torch.float64) or a complex one, "
            f"e.g. {name}.to(torch.float64)"
        )
    return t


_NAN_TEXT = "contains NaN or Inf; derivatives computed there are NaN or meaningless"
NAN_WARNING = rf".* {_NAN_TEXT}"  # the message, as a pattern for warnings.filterwarnings


def check_finite(name: str, t: torch.Tensor) -> None:
    """Warn (``RuntimeWarning``) if ``t`` holds NaN or Inf: derivatives there are meaningless."""
    # A finite sum proves every element finite (NaN and Inf propagate) in one cheap kernel;
    # only a non-finite sum, which may also be an overflow of finite values, needs the full check.
    try:
        total = t.detach().sum().item()
    except RuntimeError as err:  # inside torch.func.vmap: no .item() on a batched tensor
        if "vmap" in str(err):
            return  # the values are per sample, out of reach here: no warning rather than a crash
        raise
    if cmath.isfinite(total) if isinstance(total, complex) else math.isfinite(total):
        return
    if not bool(torch.isfinite(t).all()):
        warnings.warn(
            f"{name} {_NAN_TEXT}",
            RuntimeWarning,
            stacklevel=3,
        )


def as_input_tuple(name: str, x: Inputs) -> tuple[tuple[torch.Tensor, ...], bool]:
    """Normalise one tensor or a tuple/list of tensors; return ``(tensors, was_tuple)``."""
    is_tuple = isinstance(x, (tuple, list))
    xs = tuple(x) if is_tuple else (x,)
    if is_tuple and not xs:
        raise ValueError(f"{name} is an empty sequence; expected at least one tensor")
    for i, xi in enumerate(xs):
        label = f"{name}[{i}]" if is_tuple else name
        check_tensor(label, xi)
        check_differentiable_dtype(label, xi)
        check_finite(label, xi)
    return xs, is_tuple


def fresh_leaves(xs: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, ...]:
    """Private copies of the caller's tensors as new leaf tensors that require grad.

    The copies share nothing with the originals, so neither ``.grad``, ``requires_grad``
    nor the values of the caller's tensors can change, whatever ``fn`` does.
    """
    return tuple(xi.detach().clone().requires_grad_(True) for xi in xs)


def as_output_tuple(fn: Callable[..., Any], out: Any) -> tuple[tuple[torch.Tensor, ...], bool]:
    """Check what ``fn`` returned: a tensor or a tuple/list of tensors."""
    name = getattr(fn, "__name__", "fn")
    is_tuple = isinstance(out, (tuple, list))
    outs = tuple(out) if is_tuple else (out,)
    if is_tuple and not outs:
        raise TypeError(f"{name} returned an empty {type(out).__name__}; expected tensors")
    for i, yi in enumerate(outs):
        if not isinstance(yi, torch.Tensor):
            where = f"element {i} of the {type(out).__name__} returned by {name}" if is_tuple else (
                f"the value returned by {name}"
            )
            raise TypeError(
                f"{where} is a {type(yi).__name__}, expected a torch.Tensor; "
                f"return tensors (use torch operations, not .item() or float())"
            )
    return outs, is_tuple


def check_single_output(fn: Callable[..., Any], out: Any) -> torch.Tensor:
    """For VJP helpers: ``fn`` must return exactly one tensor."""
    name = getattr(fn, "__name__", "fn")
    if isinstance(out, (tuple, list)):
        raise TypeError(
            f"{name} returned a {type(out).__name__} of {len(out)} values; a VJP needs one output "
            f"tensor: return one tensor, or wrap fn, e.g. lambda x: fn(x)[0]"
        )
    outs, _ = as_output_tuple(fn, out)
    return outs[0]


def check_cotangent(v: Any, y: torch.Tensor, name: str = "v") -> torch.Tensor:
    """Check the upstream gradient ``v`` against the output ``y`` it is paired with."""
    if isinstance(v, (int, float, complex)) and not isinstance(v, bool):
        v = torch.tensor(v, dtype=y.dtype)
    check_tensor(name, v)
    if v.shape != y.shape:
        raise ValueError(
            f"{name} has shape {tuple(v.shape)} but the output has shape {tuple(y.shape)}; "
            f"the upstream gradient (grad_outputs, cotangent) must have the output's shape"
        )
    check_differentiable_dtype(name, v)
    return v.detach().to(dtype=y.dtype)


def check_requires_grad(y: torch.Tensor, what: str = "the output") -> None:
    """Raise a ``ValueError`` if ``y`` is not attached to a graph."""
    if not y.requires_grad:
        raise ValueError(
            f"{what} does not require grad, so backward() has nothing to differentiate: "
            f"it does not depend on the input through differentiable operations "
            f"(detach(), integer ops, torch.no_grad() or argmax-like ops cut the graph)"
        )
