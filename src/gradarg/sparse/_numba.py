"""Compile a module's loops with numba on first use, so that ``import gradarg`` never imports it.

``@lazy_njit`` marks a plain Python function of a module as a compiled kernel.  The first call
of any marked function imports numba and replaces *every* marked function of that module, in
the module's namespace, by ``numba.njit(cache=True)`` of it: kernels that call each other by
their global names then find compiled functions when numba compiles them.  Callers that
imported a marked name keep a thin forwarder (one dictionary look-up per call).

``cache=True`` writes the machine code next to the module (``__pycache__``); a later process
loads it instead of compiling again (importing numba takes about 0.2 s, loading a cached
kernel a few milliseconds, compiling one a second or more, once per installation).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

__all__ = ["lazy_njit"]


class _Lazy:
    """A kernel not compiled yet: forwards every call to the module's compiled version."""

    def __init__(self, func: Callable[..., Any], inline: bool = False) -> None:
        self.func = func
        self.inline = inline
        functools.update_wrapper(self, func)

    def __call__(self, *args: Any) -> Any:
        namespace = self.func.__globals__
        compiled = namespace.get(self.func.__name__)
        if compiled is self or compiled is None:
            compiled = _compile_module(namespace)[self.func.__name__]
        return compiled(*args)


def _compile_module(namespace: dict[str, Any]) -> dict[str, Any]:
    import numba

    for name, obj in list(namespace.items()):
        if isinstance(obj, _Lazy):
            options = {"inline": "always"} if obj.inline else {}
            namespace[name] = numba.njit(cache=True, **options)(obj.func)  # type: ignore[call-overload]
    return namespace


def lazy_njit(func: Callable[..., Any] | None = None, *, inline: bool = False):
    """Mark ``func`` (a module-level function numba can compile) as a lazily compiled kernel;
    ``@lazy_njit(inline=True)``: a small helper inlined into the kernels that call it."""
    if func is None:
        return lambda f: _Lazy(f, inline)
    return _Lazy(func)
