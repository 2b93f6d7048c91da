"""Graph cuts inside ``fn``: a tensor that depends on the input turned into a Python number.

``gradarg.jacobian(lambda t: t * t.sum().item(), x)`` returns ``sum(x)·I``: the ``.item()``
term is a Python constant to autograd, so every autodiff route (and
``torch.autograd.functional.jacobian``) drops the ``x 1ᵀ`` part of the true Jacobian, without
a word (issue 44; ``torch.func`` raises there under ``vmap``).  :func:`watching` runs ``fn``
under a :class:`torch.overrides.TorchFunctionMode` that looks at the few calls that leave
autograd's view (``Tensor.item``, ``float()``, ``int()``, ``bool()``, ``complex()``,
``operator.index``, ``.tolist()``, ``.numpy()``, ``numpy.asarray``) and warns
(:class:`GraphCutWarning`, a ``UserWarning``) when the tensor they convert depends on an input
being differentiated: its autograd graph reaches an input (reverse mode), it carries a
forward-mode tangent (forward mode), or it is a ``detach()`` of such a tensor (or the result
of an operation on one).  A constant (a captured tensor, a parameter that is not an input)
does not warn, nor does code that runs with grad mode off (an ``autograd.Function``'s
``forward``, which brings its own backward; a ``torch.no_grad()`` block).  The mode is entered only when an input requires grad or is a dual tensor, so
the finite-difference evaluations run without it.  A function object found clean on inputs
of one signature is not watched again on that signature (a mode costs about 3 us per
operation of ``fn``, even one that does nothing); one that cut is watched at every call, so
each call that returns a derivative missing a term says so (see :func:`watching`).

A number that only steers control flow (``if t.sum().item() > 0:``) is right to be a
constant (the derivative of a branch is that of the branch taken); the warning says so, and
``warnings.filterwarnings("ignore", category=gradarg.core.cuts.GraphCutWarning)`` silences it.
"""

from __future__ import annotations

import contextlib
import os
import sys
import types
import warnings
import weakref
from collections.abc import Sequence
from typing import Any

import torch
import torch.autograd.forward_ad as fwAD
from torch.overrides import TorchFunctionMode

__all__ = ["GraphCutWarning", "watching"]

# the calls that hand a tensor's value to Python or NumPy, as they reach __torch_function__
CUTS = {
    "item": "Tensor.item()", "__float__": "float()", "__int__": "int()",
    "__bool__": "bool()", "__complex__": "complex()", "__index__": "operator.index()",
    "tolist": "Tensor.tolist()", "numpy": "Tensor.numpy()", "__array__": "numpy.asarray()",
}


_DISPATCH = (os.path.join("torch", "overrides.py"), os.path.join("torch", "_tensor.py"))


class GraphCutWarning(UserWarning):
    """``fn`` turned a tensor that depends on the input into a Python number or NumPy array:
    the derivative through that value is treated as zero."""


def _tangent(t: torch.Tensor) -> bool:
    if fwAD._current_level < 0:  # no dual level entered: no tangents (and no unpack cost)
        return False
    try:
        return fwAD.unpack_dual(t).tangent is not None
    except RuntimeError:  # e.g. a tensor subclass unpack_dual does not take
        return False


def _reaches(t: torch.Tensor, inputs: Sequence[torch.Tensor]) -> bool:
    """Whether the autograd graph of ``t`` reaches one of the ``inputs`` (a leaf's
    ``AccumulateGrad`` or a non-leaf input's ``grad_fn``); graph.reachable_inputs' walk,
    here without importing :mod:`.graph` (whose ``call`` enters this module's mode)."""
    leaves = {id(x) for x in inputs if x.grad_fn is None}
    nodes = [x.grad_fn for x in inputs if x.grad_fn is not None]
    node_ids = {id(n) for n in nodes}
    stack, seen = [t.grad_fn], {}
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen[id(node)] = node  # kept referenced: ids are not reused during the walk
        variable = getattr(node, "variable", None)
        if id(node) in node_ids or (variable is not None and id(variable) in leaves):
            return True
        stack.extend(nxt for nxt, _ in node.next_functions)
    return False


def _caller_level() -> int:
    """The ``stacklevel`` of the code that asked for the conversion (past torch's dunder
    wrappers: ``float(t)`` runs ``Tensor.__float__`` and ``handle_torch_function``), or 0 when
    that code is torch's or gradarg's own (a check of a nested ``jacobian``, a shape read
    inside a torch function): those are not ``fn``'s cuts."""
    frame: types.FrameType | None = sys._getframe(2)  # the caller of __torch_function__
    level = 2
    while frame is not None and frame.f_code.co_filename.endswith(_DISPATCH):
        frame, level = frame.f_back, level + 1
    if frame is None:
        return 0
    module = frame.f_globals.get("__name__", "")
    return 0 if module.split(".")[0] in ("torch", "gradarg") else level


class _Watch(TorchFunctionMode):
    def __init__(self, inputs: Sequence[torch.Tensor]) -> None:
        super().__init__()
        self.inputs = [x for x in inputs if x.requires_grad]
        self.dual = any(_tangent(x) for x in inputs)
        # id -> weakref of the detached copies (a WeakSet compares tensors with ==)
        self.detached: dict[int, weakref.ref[torch.Tensor]] = {}
        self.said: set[str] = set()

    def cut(self, t: Any) -> bool:
        ref = self.detached.get(id(t))
        return ref is not None and ref() is t

    def depends(self, t: torch.Tensor) -> bool:
        if self.cut(t):
            return True
        if self.inputs and t.requires_grad and (
                any(t is x for x in self.inputs) or _reaches(t, self.inputs)):
            return True
        return self.dual and _tangent(t)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", None)
        out = func(*args, **(kwargs or {}))
        # grad mode off: an autograd.Function's forward (its backward is its own) or a
        # no_grad block of fn, whose values autograd was told not to follow
        if not args or not isinstance(args[0], torch.Tensor) or not torch.is_grad_enabled():
            return out
        if name in CUTS:
            level = _caller_level()
            if level and name not in self.said and self.depends(args[0]):
                self.said.add(name)
                warnings.warn(
                    f"fn turned a tensor that depends on the input into a Python number or "
                    f"NumPy array ({CUTS[name]}): autograd treats that value as a constant, so "
                    f"the derivative through it is taken as zero, as torch does, and the "
                    f"Jacobian misses that term (e.g. t * t.sum().item() gives sum(t)·I, not "
                    f"sum(t)·I + t 1ᵀ); keep it a tensor (t * t.sum()), or use "
                    f"method='finite-difference' for the true derivative.  Where the number "
                    f"only steers control flow (if ...: ...), the derivative is right",
                    GraphCutWarning, stacklevel=level)
        elif isinstance(out, torch.Tensor) and (
                (name == "detach" and self.depends(args[0]))
                or (self.detached and any(self.cut(a) for a in args))):
            self.detached[id(out)] = weakref.ref(out)
        return out


def _signature(ts: Sequence[torch.Tensor], tangents: Sequence[bool]) -> tuple[Any, ...]:
    """What a call's path through ``fn`` is keyed by: each input's shape, dtype and whether
    it is differentiated (requires grad, or carries a tangent: ``tangents``, one per input)."""
    return tuple((tuple(t.shape), t.dtype, t.requires_grad, d)
                 for t, d in zip(ts, tangents, strict=True))


def watching(xs: Sequence[Any], fn: Any = None,
             dual: bool = False) -> contextlib.AbstractContextManager[None]:
    """Run the body (a call of ``fn`` on ``xs``) watching for graph cuts (module docstring);
    a no-op unless an input requires grad (with grad mode on) or is a dual tensor.  A call is
    skipped only when the same function object was watched before on inputs of the same
    shapes, dtypes and differentiated set and cut nothing then (kept in a weak map): a
    ``fn`` that cut is watched, and warned about, at every call.

    Returns a context manager (a shared no-op one when nothing is watched: the common case of
    a loop of calls costs no generator and no mode).  ``dual=True``: the caller made every
    tensor of ``xs`` a dual tensor of ``torch.autograd.forward_ad`` (forward mode's own calls),
    so none is unpacked to find out (a few microseconds each).
    """
    if isinstance(fn, types.BuiltinFunctionType):  # torch.sin: one op, no Python inside
        return _UNWATCHED
    ts = [x for x in xs if isinstance(x, torch.Tensor)]
    # once: unpacking a dual costs a few us a tensor
    tangents = [True] * len(ts) if dual else [_tangent(x) for x in ts]
    if not (torch.is_grad_enabled() and any(x.requires_grad for x in ts)) and not any(tangents):
        return _UNWATCHED
    key = _signature(ts, tangents)
    clean: set[tuple[Any, ...]] | None = None
    if fn is not None:
        try:  # get first: setdefault makes a weak reference at every call
            clean = _CLEAN.get(fn)
            if clean is None:
                clean = _CLEAN.setdefault(fn, set())
        except TypeError:  # not hashable or no weak reference: watched every time
            clean = None
        if clean is not None and key in clean:
            return _UNWATCHED
    return _Watched(ts, clean, key)


_UNWATCHED: contextlib.AbstractContextManager[None] = contextlib.nullcontext()


class _Watched:
    """The body runs under a :class:`_Watch` mode; a clean run marks ``key`` clean for ``fn``."""

    def __init__(self, ts: list[torch.Tensor], clean: set[tuple[Any, ...]] | None,
                 key: tuple[Any, ...]) -> None:
        self.mode = _Watch(ts)
        self.clean = clean
        self.key = key

    def __enter__(self) -> None:
        self.mode.__enter__()

    def __exit__(self, *exc: object) -> None:
        self.mode.__exit__(*exc)
        if exc[0] is None and self.clean is not None and not self.mode.said:
            self.clean.add(self.key)


# functions watched already and found to cut nothing, with the input signatures they were
# watched on: the mode costs about 3 us per torch call of fn (torch's Python dispatch of
# every operation, measured with a mode that does nothing), so a clean fn called over and
# over (a loop of jacobian calls, the benchmarks) is watched at its first call per signature
# only; a later call that takes another path through fn on inputs of the same signature (a
# branch on values) is not watched again.  A fn that cut is watched at every call.
_CLEAN: weakref.WeakKeyDictionary[Any, set[tuple[Any, ...]]] = weakref.WeakKeyDictionary()
