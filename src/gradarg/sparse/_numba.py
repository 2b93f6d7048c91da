"""Compile a module's loops with numba on first use, and decide when numba is worth loading.

``@lazy_njit`` marks a plain Python function of a module as a compiled kernel.  The first call
of any marked function imports numba and replaces *every* marked function of that module, in
the module's namespace, by ``numba.njit(cache=True)`` of it: kernels that call each other by
their global names then find compiled functions when numba compiles them.  Callers that
imported a marked name keep a thin forwarder (one dictionary look-up per call).

``cache=True`` writes the machine code next to the module (``__pycache__``); a later process
loads it instead of compiling again.  Loading is not free: the first kernel of a process
imports numba and runs its start-up (``load_additional_registries``, which imports
``scipy.linalg``): 0.4–0.65 s on one thread (torch 2.13, numba 0.68, measured on a loaded
2-core machine), then a few milliseconds per module of kernels.  Compiling (a fresh
installation) takes a second or more per module, once.

Three paths (:data:`PATHS`, forced with :func:`colouring_path`, the one taken by the last
distance-2 colouring in :func:`last_path`): ``"numba"``; ``"python"``, everything interpreted
(the default without numba, and the reference the tests compare numba's kernels with, bit for
bit); ``"rustworkx"``, forced only, where the distance-2 colourings of ``SparseJacobian``
(:mod:`gradarg.sparse.d2color`, which says why it is not the default) colour the explicit
graph with rustworkx's compiled greedy colouring and the other colourings run interpreted.

When numba pays: the colourings that ``SparseJacobian`` and ``SparseHessian`` make by default
(distance-2 largest-first and DSATUR, the bidirectional split, the symmetrised pattern, the
smallest-last order and star colouring) also exist numba-free (:mod:`gradarg.sparse._pycolor`:
vectorised NumPy where the result is exact, Python sets and lists where the loop is
sequential), with bit-identical results.  On the seven functions of
``benchmarks/first_call.py`` a fresh process builds the operator in 5–35 ms that way, against
0.4–5 ms once numba's kernels are loaded and 0.42–0.64 s for the build that loads them
(measured: Gray-Scott 2 × 48 × 48 Jacobian 28 ms, compiled 4.8 ms; 64 × 64 minimal-surface
Hessian 34 ms, compiled 3.5 ms).  :func:`use_numba` chooses, per colouring, by *ski rental*
(rent the interpreter until its rent reaches the price of buying numba):

* numba once its kernels are loaded in the process (a compiled loop then costs microseconds);
* numba when the interpreter's estimated cost of the colouring (the ``*_seconds`` functions of
  :mod:`gradarg.sparse._pycolor`, fitted to measured runs by ``benchmarks/colour_costs.py``)
  plus the seconds the process has already spent in interpreted colourings exceeds
  :data:`STARTUP_SECONDS`: a large pattern goes to numba at once (a tridiagonal Jacobian of
  300,000 rows: 0.47 s in a fresh process, 0.04 s later; one of 230,000 rows is coloured
  interpreted in 0.22 s, and the next build loads numba), and a process that colours many
  small patterns switches after spending about one start-up;
* the interpreter otherwise.

Whatever the sequence of patterns, the colourings then cost at most about twice what the better
of the two choices, known in advance, would have cost (the ski-rental bound), up to the
estimates' error (measured over estimated: 0.5–1.4).  Other strategies (``smallest_last``,
``acyclic``, ... through ``color_pattern`` or ``SparseHessian(method="acyclic")``) run their
greedy orders the same way and their acyclic colouring compiled.
"""

from __future__ import annotations

import functools
import gc
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = [
    "PATHS", "STARTUP_SECONDS", "colouring_path", "forced_path", "interpreted", "last_path",
    "lazy_njit", "note_path", "numba_ready", "spent_seconds", "use_numba",
]

STARTUP_SECONDS = 0.5
"""What loading numba's first kernel costs in a fresh process, in seconds (measured: 0.4–0.65 s
on one thread, import and start-up; ``benchmarks/first_call.py`` prints it)."""

PATHS = ("rustworkx", "numba", "python")
"""The paths a colouring can take: ``"rustworkx"`` (the distance-2 colourings of
:mod:`gradarg.sparse.d2color` on an explicit graph coloured by rustworkx's compiled greedy
colouring; the other colourings interpreted; forced only), ``"numba"`` (every loop compiled)
and ``"python"`` (every loop interpreted, :mod:`gradarg.sparse._pycolor`, bit for bit the
compiled colourings)."""

FORCE: str | None = None
"""One of :data:`PATHS` to force that path (set it with :func:`colouring_path`); ``None``: the
rule (:func:`use_numba`: numba or interpreted)."""

_state: dict[str, Any] = {"ready": False, "spent": 0.0, "depth": 0}


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
    _state["ready"] = True
    return namespace


def lazy_njit(func: Callable[..., Any] | None = None, *, inline: bool = False):
    """Mark ``func`` (a module-level function numba can compile) as a lazily compiled kernel;
    ``@lazy_njit(inline=True)``: a small helper inlined into the kernels that call it."""
    if func is None:
        return lambda f: _Lazy(f, inline)
    return _Lazy(func)


def numba_ready() -> bool:
    """True once some module's kernels are loaded in this process (numba's start-up paid)."""
    return bool(_state["ready"])


def use_numba(estimate: float | Callable[[], float]) -> bool:
    """Whether a colouring whose interpreted run would take about ``estimate`` seconds should
    run compiled: numba's kernels are loaded already, or the estimate and the interpreted
    seconds spent so far exceed :data:`STARTUP_SECONDS` (see the module's docstring).

    ``estimate`` may be a function of no argument, called only when numba is not loaded (the
    estimates read the whole pattern).

    Examples
    --------
    >>> use_numba(10.0)   # ten seconds interpreted: numba's start-up is cheaper
    True
    """
    if FORCE is not None:
        return FORCE == "numba"
    if numba_ready():
        return True
    seconds = estimate() if callable(estimate) else estimate
    return _state["spent"] + seconds > STARTUP_SECONDS


@contextmanager
def interpreted() -> Iterator[None]:
    """Time an interpreted colouring and add its seconds to the process's account (the
    outermost one, when nested).

    Python's cyclic garbage collector is paused meanwhile: the colourings allocate thousands
    of lists and sets (no cycles among them), enough to set off a full collection, which in a
    process that has imported torch walks millions of objects (50–150 ms, measured).
    """
    if _state["depth"]:
        yield
        return
    was_enabled = gc.isenabled()
    gc.disable()
    _state["depth"] = 1
    start = time.perf_counter()
    try:
        yield
    finally:
        _state["spent"] += time.perf_counter() - start
        _state["depth"] = 0
        if was_enabled:
            gc.enable()


@contextmanager
def colouring_path(path: str | None) -> Iterator[None]:
    """Force every colouring made inside the block onto ``path`` (one of :data:`PATHS`;
    ``None``: the rule), whatever ran before in the process: tests run each path this way.

    Raises
    ------
    ValueError
        ``path`` is not one of :data:`PATHS` or ``None``.

    Examples
    --------
    >>> with colouring_path("python"):
    ...     use_numba(10.0)   # forced: interpreted, whatever the estimate
    False
    """
    global FORCE
    if path is not None and path not in PATHS:
        raise ValueError(f"path must be one of {PATHS} or None, got {path!r}")
    old = FORCE
    FORCE = path
    try:
        yield
    finally:
        FORCE = old


def forced_path() -> str | None:
    """The path :func:`colouring_path` forces now (one of :data:`PATHS`), or ``None``."""
    return FORCE


def note_path(path: str) -> None:
    """Record which path the last distance-2 colouring took (:func:`last_path`)."""
    _state["last"] = path


def last_path() -> str | None:
    """The path the last distance-2 colouring of the process took (one of :data:`PATHS`, or
    ``"modular"`` or ``"lattice"`` when :func:`gradarg.sparse.lowerbound.modular` or
    :func:`~gradarg.sparse.lowerbound.lattice` met the lower bound and no search ran), or ``None`` before any: tests check that a forced path really ran."""
    return _state.get("last")


def spent_seconds() -> float:
    """Seconds this process has spent in interpreted colourings."""
    return float(_state["spent"])
