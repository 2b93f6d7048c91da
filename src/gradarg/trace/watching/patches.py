"""Calls torch offers no hook for, observed while a watch listens: ``GradScaler.unscale_``
and ``torch.autograd.backward`` (which ``Tensor.backward`` calls).

The attribute is wrapped while at least one listener exists and restored when the last one is
removed (the handle's ``remove()``), so nothing is left behind; a listener that raises is
ignored (the user's step is never broken).  A new call to observe is one :class:`_Patch`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

__all__ = ["register_backward_error_hook", "register_unscale_hook"]


class _Handle:
    def __init__(self, patch: _Patch, fn: Callable[..., None]):
        self.patch, self.fn = patch, fn

    def remove(self) -> None:
        self.patch.remove(self.fn)


class _Patch:
    """Listeners on calls of ``owner.name``; ``wrap(original, listeners)`` makes the wrapper."""

    def __init__(self, owner: Any, name: str,
                 wrap: Callable[[Any, list[Callable[..., None]]], Any]):
        self.owner, self.name, self.wrap = owner, name, wrap
        self.listeners: list[Callable[..., None]] = []
        self.original: Any = None
        self.wrapper: Any = None

    def add(self, fn: Callable[..., None]) -> _Handle:
        if not self.listeners:
            self.original = getattr(self.owner, self.name)
            self.wrapper = self.wrap(self.original, self.listeners)
            self.wrapper.__doc__ = self.original.__doc__
            self.wrapper.__wrapped__ = self.original
            setattr(self.owner, self.name, self.wrapper)
        self.listeners.append(fn)
        return _Handle(self, fn)

    def remove(self, fn: Callable[..., None]) -> None:
        if fn not in self.listeners:
            return
        self.listeners.remove(fn)
        if self.listeners:
            return
        if getattr(self.owner, self.name) is self.wrapper:
            setattr(self.owner, self.name, self.original)
        # else someone wrapped it after us: ours stays inside theirs, passing calls through
        # to no listener (a fresh list for the next watch, which wraps again)
        self.listeners = []
        self.original = self.wrapper = None


def _tell(listeners: list[Callable[..., None]], *args: Any) -> None:
    for listener in listeners:
        try:
            listener(*args)
        except Exception:  # noqa: BLE001, S112 (never break the user's step)
            continue


def _wrap_unscale(original: Any, listeners: list[Callable[..., None]]) -> Any:
    def unscale_(self: Any, optimizer: Any) -> Any:
        out = original(self, optimizer)
        _tell(listeners, self, optimizer)
        return out

    return unscale_


def _wrap_backward(original: Any, listeners: list[Callable[..., None]]) -> Any:
    def backward(*args: Any, **kwargs: Any) -> Any:
        try:
            return original(*args, **kwargs)
        except Exception as error:
            _tell(listeners, error)
            raise

    return backward


_UNSCALE = (_Patch(torch.amp.GradScaler, "unscale_", _wrap_unscale)
            if hasattr(torch.amp, "GradScaler") else None)
_BACKWARD = _Patch(torch.autograd, "backward", _wrap_backward)


def register_unscale_hook(fn: Callable[[Any, Any], None]) -> _Handle | None:
    """Call ``fn(scaler, optimizer)`` after each ``torch.amp.GradScaler.unscale_(optimizer)``
    (also when ``scaler.step`` runs it), until the handle's ``remove()``.  ``None`` where
    ``torch.amp.GradScaler`` does not exist (torch < 2.3)."""
    return None if _UNSCALE is None else _UNSCALE.add(fn)


def register_backward_error_hook(fn: Callable[[BaseException], None]) -> _Handle:
    """Call ``fn(error)`` when ``torch.autograd.backward`` (so ``Tensor.backward``) raises,
    before the error goes on to the caller; until the handle's ``remove()``."""
    return _BACKWARD.add(fn)
