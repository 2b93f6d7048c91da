"""Edits of ``.grad`` that were made out of place and thrown away, observed between a
``backward()`` and the next optimizer step: ``p.grad.data.clamp(-1, 1)`` (not ``clamp_``),
``p.grad / world_size`` as a statement, a ``g = p.grad.mul(s)`` never used.  The call returns
a new tensor and leaves ``.grad`` as it was, so the optimizer reads the gradient the backward
left, and torch says nothing.

How it is seen.  When a ``backward()`` returns (the outermost one: a backward run inside
another, as a reentrant checkpoint does, is part of it), a function mode
(:mod:`.fnmodes`) watches the torch calls until the next optimizer step, ``zero_grad``,
``backward()``, call of the watched model or the end of the block (the *window*).  A call that is given a watched
parameter's ``.grad`` (the tensor itself or a tensor over the same memory, such as its
``.data``) and returns a new tensor of the same shape and dtype over other memory, not an
in-place call nor a copy or a conversion, makes a *candidate*.  A candidate that is given to a
later torch call is used; one that is freed within the window unused was thrown away
(:class:`Discarded`).  A candidate still alive when the window closes is held somewhere (it
became ``.grad`` by assignment, or is kept in a list): nothing is said about it.

Not seen: an edit inside a compiled function, calls of a parameter sharded by FSDP2.

Imports :mod:`.fnmodes`, :mod:`.patches`, :mod:`.model` and :mod:`.sites` (whose frames
are the user's) only (:mod:`.detail` for its type).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch
from torch.optim.optimizer import register_optimizer_step_pre_hook

from . import fnmodes, patches
from .model import Watched
from .sites import user_site

if TYPE_CHECKING:
    from .detail import Detail

__all__ = ["Discarded", "GradEdits"]

# calls that return a new tensor from .grad without being edits of its values
_NOT_EDITS = frozenset({
    "clone", "detach", "contiguous", "to", "type", "cpu", "cuda", "float", "double", "half",
    "bfloat16", "zeros_like", "empty_like", "ones_like", "full_like", "rand_like",
    "randn_like", "__get__", "__set__", "__deepcopy__", "__reduce_ex__", "numpy", "tolist",
    "copy", "pin_memory", "coalesce", "to_dense",
})
KEPT = 8  # discarded edits kept per block


@dataclass(frozen=True)
class Discarded:
    """An out-of-place call on the ``.grad`` of parameter ``name`` (``op``: the call's name,
    e.g. ``"clamp"``) whose result was freed unused, made at ``site`` (``file:line`` of the
    user's code, ``""`` where not found)."""

    op: str
    name: str
    site: str


def _key(t: torch.Tensor) -> tuple[Any, ...] | None:
    """What identifies the memory a tensor reads: its first element's address, shape,
    strides and dtype (``None`` for a tensor that has no plain memory)."""
    try:
        return (t.data_ptr(), tuple(t.shape), t.stride(), t.dtype)
    except (RuntimeError, TypeError, AttributeError, NotImplementedError):
        return None


def _name(func: Any) -> str:
    return str(getattr(func, "__name__", "") or "")


# the watches' open windows: an optimizer step closes every one of them at the first step
# pre-hook of any watch, before any watch's own reads at the step (the first registered)
_OPEN: weakref.WeakSet[GradEdits] = weakref.WeakSet()


def _close_all(*args: Any) -> None:
    for edits in list(_OPEN):
        edits._close()


class GradEdits:
    """The window after each ``backward()`` and the edits of ``.grad`` thrown away in it
    (:attr:`discarded`, in order; at most :data:`KEPT`).

    Parameters
    ----------
    watched : Watched
        The model and its parameters' names (:class:`.model.Watched`).
    detail : Detail
        Which steps are recorded in full (:class:`.detail.Detail`): a window opens on those
        only (the first steps of a block, and those after a step that was off), so that a
        healthy loop's light steps pay nothing; an edit thrown away at every step is seen on
        the first.
    """

    def __init__(self, watched: Watched, detail: Detail):
        self.watched, self.detail = watched, detail
        self.discarded: list[Discarded] = []
        self._mode: fnmodes.Following | None = None
        self._grads: dict[tuple[Any, ...], str] | None = {}  # memory key -> parameter name
        self._open = False
        self._live: dict[int, tuple[weakref.ref, Discarded]] = {}  # candidates, by id
        self._handles: list[Any] = []

    def attach(self) -> None:
        self._handles = [patches.register_backward_call_hook(self._backward_call),
                         patches.register_backward_done_hook(self._backward_done, outer=True),
                         patches.register_zero_grad_hook(self._close_on),
                         register_optimizer_step_pre_hook(_close_all),
                         self.watched.model.register_forward_pre_hook(patches.module_hook(
                             patches.eager_unless_traced(self._close_on)))]

    def detach(self) -> list[Any]:
        """Close the window, pop the mode; the hooks' handles, for the owner to remove."""
        self._close()
        if self._mode is not None and not torch.compiler.is_compiling():
            fnmodes.pop(self._mode, leave=True)
        self._mode = None
        handles, self._handles = self._handles, []
        return handles

    # -- the window -------------------------------------------------------------------------
    def _backward_call(self, tensors: Any) -> None:
        self._close()

    def _backward_done(self) -> None:
        if not self.detail.full or torch.compiler.is_compiling():
            return
        self._grads, self._open = None, True  # the .grad tensors are read at the first call
        _OPEN.add(self)
        if self._mode is None:
            self._mode = fnmodes.push(self._seen)
        self._mode.on = True

    def _close_on(self, *args: Any) -> None:
        self._close()

    def _close(self) -> None:
        if not self._open:
            return
        self._open = False
        _OPEN.discard(self)
        self._grads = {}
        self._live.clear()  # alive at the close: held somewhere, nothing to say
        mode = self._mode
        if mode is not None and not torch.compiler.is_compiling():
            # not innermost (another watch's window above it, or a mode of the user's): left
            # off, popped by a later push or pop; the next window pushes a mode of its own
            fnmodes.pop(mode, leave=True)
            self._mode = None

    def _seen(self, func: Any, args: Any, kwargs: Any, out: Any) -> None:
        """A torch call in the window: its inputs use candidates; a new candidate from it."""
        if not self._open:
            return
        if self._grads is None:
            self._grads = self._read_grads()
        name, source = None, None
        for t in fnmodes.tensors_in(args, kwargs):
            if self._live:
                self._live.pop(id(t), None)  # a candidate given to a call: used
            if name is None:
                k = _key(t)
                name = self._grads.get(k) if k is not None else None
                source = t
        if name is None or source is None or not isinstance(out, torch.Tensor):
            return
        op = _name(func)
        if (not op or op.endswith("_") or op.startswith("__i") or op in _NOT_EDITS
                or out.shape != source.shape or out.dtype != source.dtype):
            return
        k = _key(out)
        if k is None or k in self._grads or out.data_ptr() == source.data_ptr():
            return
        self._candidate(out, Discarded(op.strip("_"), name, user_site()))

    def _read_grads(self) -> dict[tuple[Any, ...], str]:
        grads = {}
        for p, (name, *_) in self.watched.owner.items():
            g = p.grad
            if g is not None and type(g) is torch.Tensor:
                k = _key(g)
                if k is not None:
                    grads[k] = name
        return grads

    def _candidate(self, out: torch.Tensor, what: Discarded) -> None:
        key = id(out)

        def freed(_ref: weakref.ref) -> None:
            entry = self._live.pop(key, None)
            if entry is not None and entry[0] is _ref and self._open \
                    and len(self.discarded) < KEPT:
                self.discarded.append(entry[1])

        self._live[key] = (weakref.ref(out, freed), what)
