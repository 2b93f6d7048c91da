"""The caller's module buffers, kept as they were across the many evaluations of ``fn``.

A Jacobian, a check or a comparison evaluates ``fn`` many times (finite differences: hundreds).
A module in training mode updates buffers in place at every call: ``BatchNorm``'s running mean
and variance and its ``num_batches_tracked``, a counter a module keeps.  Without care, asking
for a Jacobian of ``model`` would move its running statistics by as many steps as the helper
evaluated it.  :func:`buffers_kept` snapshots the buffers of the modules ``fn`` can reach
(``fn`` itself, the object of a bound method, the modules in its closure and the globals it
names, one level deep) and writes them back when the helper is done.  Buffers a module
*replaces* (assigns a new tensor to) are not restored; in-place updates, torch's own, are.
Imports torch only.
"""

from __future__ import annotations

import contextlib
import functools
import types
from collections.abc import Callable
from typing import Any

import torch

__all__ = ["buffers_kept", "keeps_buffers", "modules_of"]


def modules_of(fn: Callable[..., Any] | Any) -> list[torch.nn.Module]:
    """The ``nn.Module`` objects ``fn`` can reach directly: ``fn`` itself, ``fn.__self__``
    (a bound method such as ``model.forward``), the contents of its closure cells and the
    globals its code names (``lambda t: model(t)``), each once."""
    found: dict[int, torch.nn.Module] = {}

    def add(obj: Any) -> None:
        if isinstance(obj, torch.nn.Module):
            found.setdefault(id(obj), obj)

    add(fn)
    add(getattr(fn, "__self__", None))
    code = getattr(fn, "__code__", None)
    for cell in getattr(fn, "__closure__", None) or ():
        with contextlib.suppress(ValueError):  # an empty cell
            add(cell.cell_contents)
    glob = getattr(fn, "__globals__", None)
    if code is not None and isinstance(glob, dict):
        for name in code.co_names:
            add(glob.get(name))
    return list(found.values())


def buffers_kept(fn: Callable[..., Any] | Any) -> contextlib.AbstractContextManager[None]:
    """Inside: ``fn`` may be evaluated any number of times; on leaving, every buffer of the
    modules :func:`modules_of` finds holds the values it held on entering (copied back in
    place, so references to them stay valid).  With no buffer to keep (a plain function, a
    module without buffers) a shared no-op context manager."""
    saved = _snapshot(fn)
    return _Restoring(saved) if saved else _NOTHING_KEPT


def _snapshot(fn: Callable[..., Any] | Any) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """``(buffer, copy of its values)`` for every buffer of the modules ``fn`` reaches."""
    seen: set[int] = set()
    saved: list[tuple[torch.Tensor, torch.Tensor]] = []
    for module in modules_of(fn):
        for buf in module.buffers():
            if id(buf) not in seen and buf is not None:
                seen.add(id(buf))
                saved.append((buf, buf.detach().clone()))
    return saved


_NOTHING_KEPT: contextlib.AbstractContextManager[None] = contextlib.nullcontext()


class _Restoring:
    """Writes the saved values back on leaving, whatever ended the body."""

    def __init__(self, saved: list[tuple[torch.Tensor, torch.Tensor]]) -> None:
        self.saved = saved

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        with torch.no_grad():
            for buf, value in self.saved:
                if buf.shape == value.shape and not torch.equal(buf, value):
                    buf.copy_(value)


def keeps_buffers(position: int = 0, name: str = "fn") -> Callable[[Callable[..., Any]], Any]:
    """Decorator: the wrapped helper runs inside :func:`buffers_kept` of its argument at
    ``position`` (or keyword ``name``), the function it evaluates.  The wrapper is made with
    the helper's own globals, so that documentation tools resolve its annotations (type
    aliases of the helper's module) as they would on the helper."""
    keep = buffers_kept

    def wrap(helper: Callable[..., Any]) -> Callable[..., Any]:
        def kept(*args: Any, **kwargs: Any) -> Any:
            fn = args[position] if len(args) > position else kwargs.get(name)
            with keep(fn):
                return helper(*args, **kwargs)
        rebuilt = types.FunctionType(kept.__code__, helper.__globals__, helper.__name__,
                                     None, kept.__closure__)
        return functools.wraps(helper)(rebuilt)
    return wrap
