"""A ``torch.overrides.TorchFunctionMode`` pushed and popped from a watch's hooks, to see the
torch calls the user's code makes between two events (:mod:`.graphless`: what is computed
from ``torch.autograd.grad``'s result; :mod:`.gradedits`: what is done to ``.grad`` after a
backward).

A mode pushed from a hook is not always the innermost one when it is to be popped: the user
may have entered a mode of their own since, or the hook may run inside another mode's
``__torch_function__`` (torch takes that mode off the stack while its handler runs, and puts
it back after).  :func:`pop` pops the mode only when it is the innermost function mode; else
it turns it off (it passes every call on) and says so, for the caller to try again later; a
mode its owner is done with is popped by a later push or pop, once it is innermost again.
Innermost: a call made under a probe mode pushed on top reaches it with no other mode's
``__torch_function__`` in between.

Imports nothing of the trace room.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

__all__ = ["Following", "pop", "push", "tensors_in"]


def tensors_in(args: Any, kwargs: Any) -> list[torch.Tensor]:
    """The tensors among a call's arguments, and in its list and tuple arguments."""
    found = []
    for a in (*args, *(kwargs or {}).values()):
        if isinstance(a, torch.Tensor):
            found.append(a)
        elif isinstance(a, (list, tuple)):
            found.extend(t for t in a if isinstance(t, torch.Tensor))
    return found


class Following(TorchFunctionMode):
    """Calls ``seen(func, args, kwargs, out)`` after each torch call while :attr:`on`."""

    def __init__(self, seen: Callable[[Any, Any, Any, Any], None]):
        super().__init__()
        self.seen = seen
        self.reached: bool | None = None  # while probed: reached straight from the probe
        self.on = True  # off: a mode left on the stack passes calls on

    def __torch_function__(self, func: Any, types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        if self.reached is False:  # a probe's call: was another mode's handler in between?
            frame: FrameType | None = sys._getframe(1)
            while frame is not None and frame.f_code is not _PROBE_CODE:
                if frame.f_code.co_name == "__torch_function__":
                    break
                frame = frame.f_back
            self.reached = frame is not None and frame.f_code is _PROBE_CODE
            return func(*args, **(kwargs or {}))
        out = func(*args, **(kwargs or {}))
        if self.on:
            self.seen(func, args, kwargs, out)
        return out


# modes that could not be popped (a mode of the user's above them), off: each is popped at
# the next push or pop once it is the innermost mode again
_ORPHANS: list[Following] = []


def push(seen: Callable[[Any, Any, Any, Any], None]) -> Following:
    """A new :class:`Following` mode, entered (on top of the function-mode stack), after
    popping the modes left off that are innermost again."""
    _sweep()
    mode = Following(seen)
    mode.__enter__()
    return mode


def _innermost(mode: Following) -> bool:
    mode.on, mode.reached = False, False
    with _Probe():  # pushed on top: a call reaches it, then the next mode down
        torch.zeros(())
    innermost, mode.reached = mode.reached, None
    return bool(innermost)


def _sweep() -> None:
    """Pop the modes left off, from the innermost one down, while one of them is innermost."""
    while _ORPHANS:
        top = next((m for m in reversed(_ORPHANS) if _innermost(m)), None)
        if top is None:
            return
        _ORPHANS.remove(top)
        top.__exit__(None, None, None)


def pop(mode: Following, *, leave: bool = False) -> bool:
    """Turn ``mode`` off and pop it if it is the innermost function mode; ``True`` when popped.
    Else it stays on the stack, off, passing calls on; with ``leave`` (its owner is done with
    it) it is popped by a later :func:`push` or :func:`pop` once it is innermost again."""
    _sweep()  # a mode left off above it first
    popped = _innermost(mode)
    if popped:
        mode.__exit__(None, None, None)
        _sweep()
    elif leave and mode not in _ORPHANS:
        _ORPHANS.append(mode)
    return popped


class _Probe(TorchFunctionMode):
    """Passes every call on; :class:`Following` looks for its frame (see :func:`pop`)."""

    def __torch_function__(self, func: Any, types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        return func(*args, **(kwargs or {}))


_PROBE_CODE = _Probe.__torch_function__.__code__
