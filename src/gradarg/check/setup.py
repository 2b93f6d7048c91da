"""The inputs a check differentiates: the tensors that require grad (and a module's parameters),
their names, and ``fn`` as a function of those tensors only."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from .._validate import check_dense
from ..core.compose import inside_transform, transform_name
from ..core.cuts import watching

__all__ = ["Setup", "arg_names", "setup"]


def arg_names(fn: Any, n: int) -> list[str]:
    target = fn
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, type) and issubclass(owner, torch.autograd.Function):
        target = owner.forward
    elif isinstance(fn, torch.nn.Module):
        target = fn.forward
    try:
        params = [p for p in inspect.signature(target).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params]
    if names and names[0] in ("ctx", "self"):
        names = names[1:]
    return [names[i] if i < len(names) else f"input {i}" for i in range(n)]


@dataclass
class Setup:
    """The checked inputs ``xs`` (detached copies) and their ``names``; ``flat(*xs)``, ``fn`` as a
    function of them returning a tuple of outputs; the inputs left out with the reason
    (``skipped``); ``fn``'s positional ``args`` and where each checked input comes from
    (``slots``: ``("arg", position)`` or ``("param", name)``)."""

    names: list[str]
    xs: tuple[torch.Tensor, ...]
    flat: Callable[..., tuple[torch.Tensor, ...]]
    skipped: list[str]
    args: tuple
    slots: tuple

    def at(self, xs: tuple[torch.Tensor, ...]) -> Setup:
        """The same function at other values of the checked inputs."""
        args = list(self.args)
        for (kind, key), x in zip(self.slots, xs, strict=True):
            if kind == "arg":
                args[key] = x
        return Setup(self.names, xs, self.flat, [], tuple(args), self.slots)

    def outputs(self, keep: list[int]) -> Setup:
        """The same function returning only its outputs ``keep`` (in that order)."""
        flat = self.flat

        def kept(*ts: torch.Tensor) -> tuple[torch.Tensor, ...]:
            out = flat(*ts)
            return tuple(out[k] for k in keep)

        return Setup(self.names, self.xs, kept, self.skipped, self.args, self.slots)

    def call_args(self) -> list:
        """``args`` with the checked tensors replaced by detached copies of ``xs``."""
        args = [a.detach().clone() if isinstance(a, torch.Tensor) else a for a in self.args]
        for (kind, key), x in zip(self.slots, self.xs, strict=True):
            if kind == "arg":
                args[key] = x.detach().clone()
        return args


def setup(fn, args, parameters: bool) -> Setup:
    if inside_transform():  # requires_grad_() on copies is refused there (torch's own error)
        raise ValueError(
            f"check_backward runs torch's backward pass on detached copies of the inputs and "
            f"returns a verdict, which torch.func transforms cannot differentiate or batch; it "
            f"was called inside {transform_name()}. Call it outside the transform")
    names_all = arg_names(fn, len(args))
    slots: list[tuple[str, Any]] = []  # ("arg", position) or ("param", name)
    names, xs, skipped = [], [], []
    for i, (a, name) in enumerate(zip(args, names_all, strict=True)):
        if not isinstance(a, torch.Tensor):
            continue
        if a.is_meta or (a.requires_grad and a.layout != torch.strided):
            check_dense(name, a)  # the ValueError (meta) or TypeError (sparse) naming it
        if not (a.is_floating_point() or a.is_complex()):
            skipped.append(f"{name} ({a.dtype}): integer and bool tensors have no gradient")
        elif a.is_complex():
            skipped.append(f"{name} ({a.dtype}): complex inputs are not checked here; use "
                           f"gradarg.compare_vjp")
        elif not a.requires_grad:
            skipped.append(f"{name}: does not require grad")
        else:
            slots.append(("arg", i))
            names.append(name)
            xs.append(a.detach().clone())
    module = fn if isinstance(fn, torch.nn.Module) else None
    if module is not None and parameters:
        for pname, p in module.named_parameters():
            if p.requires_grad:
                slots.append(("param", pname))
                names.append(pname)
                xs.append(p.detach().clone())
            else:
                skipped.append(f"{pname}: parameter does not require grad")
    if not xs:
        raise ValueError(
            "no input to check: mark the tensors whose gradient the backward computes with "
            "requires_grad_() (floating dtypes), e.g. x = torch.randn(3, requires_grad=True)"
        )
    buffers = dict(module.named_buffers()) if module is not None else {}

    def flat(*ts: torch.Tensor) -> tuple[torch.Tensor, ...]:
        call_args = list(args)
        params: dict[str, torch.Tensor] = {}
        for (kind, key), t in zip(slots, ts, strict=True):
            if kind == "arg":
                call_args[key] = t
            else:
                params[key] = t
        wide = next((t.dtype for t in ts if t.dtype == torch.float64), None)
        if wide is not None and any(t.dtype != a.dtype for t, a in zip(ts, xs, strict=True)):
            # finite differences on float64 copies: the constant arguments follow
            call_args = [a.to(wide) if isinstance(a, torch.Tensor) and a.is_floating_point()
                         else a for a in call_args]
        # a .item() of a tensor depending on an input: say so
        with watching(ts, fn if module is None else module):
            if module is None:
                out = fn(*call_args)
            else:
                state = {**buffers, **params}
                if wide is not None:
                    state = {k: (v.to(wide) if v.is_floating_point() else v)
                             for k, v in state.items()}
                out = torch.func.functional_call(module, state, tuple(call_args))
        return tuple(out) if isinstance(out, (tuple, list)) else (out,)

    return Setup(names, tuple(xs), flat, skipped, tuple(args), tuple(slots))
