"""A compressed Jacobian or Hessian compiled once for one function, then called many times.

``SparseJacobian.compile(fn)`` and ``SparseHessian.compile(f)`` return a
:class:`CompiledSparse`: the compressed pass (one ``torch.func.vjp`` / ``jvp`` batched by
``torch.func.vmap`` over the colours, or ``jvp`` of ``grad`` for a Hessian), written as one pure
function of ``x`` and handed to ``torch.compile``, then the recovery of the entries from its
result (one ``index_select``, or the acyclic substitution's few operations), run eagerly.  A call
is then a handful of fused kernels instead of the eager batched pass's hundreds of operator calls.
The recovery stays outside the compiled function because inductor fuses a gather into the
kernels that produce its input, recomputing them per entry: fused, a call was 1.9× slower on
the minimal-surface Hessian and 3.3× on Gray-Scott, and faster on none of the seven functions of
``benchmarks/asdex_side_by_side.py`` (torch 2.13, one thread).
It pays where a function is called many times at one input shape (Newton iterations, implicit
time stepping); compilation takes seconds, so one call stays cheaper eagerly.

May import torch, :mod:`gradarg.sparse._layouts` and ``gradarg.core.speeds`` (its timing
helper); its owners (``compressed``, ``hessian``) give it their modes
(:class:`gradarg.sparse.modes.Mode`: the pure pass, the seeds, the recovery), so nothing here
knows a colouring.
"""

from __future__ import annotations

import functools
import os
import shutil
import time
import types
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import torch

from ..core.speeds import best_of_3
from ._layouts import check_layout, refuse_in_transform

if TYPE_CHECKING:
    from .modes import Mode

__all__ = ["CompiledSparse", "compile_parameters", "resolve_backend"]

F = TypeVar("F", bound=Callable[..., Any])

# the parameters of SparseJacobian.compile and SparseHessian.compile after their first
_PARAMETERS = """\
        backend : str
            ``torch.compile``'s backend.  ``"auto"`` (default): ``"inductor"`` (C++ kernels)
            where a C++ compiler is found, else ``"aot_eager"`` (traced, run by torch's own
            kernels); :attr:`gradarg.sparse.CompiledSparse.backend` says which.
        mode : str, optional
            Passed to ``torch.compile``.
        fullgraph : bool
            ``True`` (default): one graph or a ``RuntimeError`` at the first call naming
            what could not be captured; ``False`` lets torch run those parts eagerly."""


def compile_parameters(method: F) -> F:
    """Write the shared parameters of a ``compile`` method into its docstring, in place of
    ``{compile_parameters}`` (indented as they are here)."""
    if method.__doc__:  # None under python -OO
        method.__doc__ = method.__doc__.replace("        {compile_parameters}", _PARAMETERS)
    return method


def resolve_backend(backend: str) -> str:
    """``"auto"`` -> ``"inductor"`` when a C++ compiler is on the machine (``$CXX``, ``g++``,
    ``c++`` or ``clang++`` on the ``PATH``: inductor compiles its CPU kernels with it), else
    ``"aot_eager"``; any other name is returned as given (``torch.compile`` checks it)."""
    if backend != "auto":
        return backend
    cxx = os.environ.get("CXX")
    found = (cxx and shutil.which(cxx)) or any(
        shutil.which(name) for name in ("g++", "c++", "clang++"))
    return "inductor" if found else "aot_eager"


class CompiledSparse:
    r"""A sparse Jacobian or Hessian of one function, compiled by ``torch.compile``.

    Built by :meth:`gradarg.SparseJacobian.compile` or :meth:`gradarg.SparseHessian.compile`;
    calling it with ``x`` returns what the eager call ``sj(fn, x)`` / ``sh(f, x)`` returns
    (same entries, same layout rules), computed by one compiled function of ``x``.

    The first call at a new input shape or dtype traces ``fn`` under ``torch.func``'s
    transforms and compiles (``torch.compile(..., backend=backend, fullgraph=fullgraph,
    dynamic=False)``; see https://pytorch.org/docs/stable/generated/torch.compile.html): seconds,
    reported in :attr:`compile_seconds`.  Later calls at that shape and dtype reuse it.

    Attributes
    ----------
    passes : int
        Compressed passes (VJPs, JVPs or Hessian-vector products) per call, as in the owner.
    mode : str
        ``"reverse"``, ``"forward"``, ``"bidirectional"`` or ``"star"``/``"acyclic"``.  When
        several sides of a Jacobian need as many passes, each is compiled at the first call
        and the fastest over 3 calls is kept: which one wins depends on the function (compiled
        forward mode took 0.18 ms on the Gray-Scott residual where compiled reverse mode took
        0.70 ms, with the recovery fused into the compiled pass).
    route : str
        ``"compiled"``, or ``"eager"`` when at the first call the owner's eager call was
        faster than the compiled function (best of 3 calls each): a small convolutional network
        on a batch, whose convolutions inductor leaves to torch's kernels, took 2.1 ms compiled
        and 1.7 ms eagerly.  Calls then go to the eager call, so that, as measured at the
        first call, compiling never makes a call slower.
    compile_seconds : float or None
        Wall-clock seconds of the first call (trace, compile, the timed calls that choose
        between candidates), ``None`` before it.
    backend : str
        The ``torch.compile`` backend used: ``"inductor"`` (C++ kernels on the CPU, which
        needs a C++ compiler) or ``"aot_eager"`` (traced and functionalised, then run by
        torch's own kernels: no compiler needed, a smaller gain).  ``"auto"`` chooses
        inductor when ``gradarg.sparse.compiled.resolve_backend`` finds a C++ compiler.

    Raises
    ------
    TypeError, ValueError
        On a call, as the eager call raises them (wrong ``x``, wrong output of ``fn``).
    RuntimeError
        The first call could not compile ``fn`` (with ``fullgraph=True``, an operation that
        ``torch.compile`` cannot capture, such as ``.item()`` or printing): the message says
        so and keeps torch's reason; the eager call ``sj(fn, x)`` still works.
    """

    def __init__(
        self,
        owner: Any,
        fn: Callable[..., torch.Tensor],
        candidates: Mapping[str, tuple[Callable[..., torch.Tensor],
                                       Callable[[torch.dtype], tuple[torch.Tensor, ...]],
                                       Callable[[torch.Tensor], torch.Tensor]]],
        prepare: Callable[[torch.Tensor], tuple[int, ...]],
        eager: Callable[[torch.Tensor], torch.Tensor],
        assemble: Callable[[torch.Tensor, tuple[int, ...], tuple[int, ...], torch.layout],
                           torch.Tensor],
        *,
        backend: str,
        mode: str | None,
        fullgraph: bool,
    ) -> None:
        self._owner = owner
        self.fn = fn
        self.passes: int = owner.passes
        self.backend = resolve_backend(backend)
        self.compile_seconds: float | None = None
        self.mode = next(iter(candidates))
        self.route = "compiled"
        self._eager = eager
        self._prepare = prepare
        self._assemble = assemble
        self._y_shapes: dict[tuple, tuple[int, ...]] = {}
        self._fullgraph = fullgraph
        self._candidates = {
            name: (self._own_compile(pure, self.backend, mode, fullgraph), seeds, recover)
            for name, (pure, seeds, recover) in candidates.items()
        }
        self._compiled, self._seeds, self._recover = self._candidates[self.mode]

    @classmethod
    def of_modes(
        cls,
        owner: Any,
        fn: Callable[..., torch.Tensor],
        modes: Sequence[Mode],
        prepare: Callable[[torch.Tensor], tuple[int, ...]],
        assemble: Callable[[torch.Tensor, tuple[int, ...], tuple[int, ...], torch.layout],
                           torch.Tensor],
        **options: Any,
    ) -> CompiledSparse:
        """The owner's ``modes`` compiled for ``fn`` (the first is the owner's own; the others
        are timed against it at the first call): per mode its pure pass, its seeds and its
        recovery; the owner's eager call, whose coalesced COO values are the entries in
        order, for the ``"eager"`` route.  ``options``: ``backend``, ``mode``, ``fullgraph``."""
        candidates = {m.name: (m.pure(fn), m.seeds, m.recover) for m in modes}

        def eager(x: torch.Tensor) -> torch.Tensor:
            return owner(fn, x).values()

        return cls(owner, fn, candidates, prepare, eager, assemble, **options)

    @staticmethod
    def _own_compile(pure, backend, mode, fullgraph):
        # torch.compile keeps its compiled graphs on the function's code object, one entry per
        # closure it has seen, up to a limit (8): each compiled function gets its own code
        own = types.FunctionType(pure.__code__.replace(), pure.__globals__, pure.__name__,
                                 pure.__defaults__, pure.__closure__)
        return torch.compile(own, backend=backend, mode=mode, fullgraph=fullgraph,
                             dynamic=False)

    def __repr__(self) -> str:
        seconds = "not yet" if self.compile_seconds is None else f"{self.compile_seconds:.2f} s"
        return (f"CompiledSparse({type(self._owner).__name__}, mode={self.mode!r}, "
                f"passes={self.passes}, backend={self.backend!r}, route={self.route!r}, "
                f"compiled: {seconds})")

    def values(self, x: torch.Tensor) -> torch.Tensor:
        """The values of the pattern's entries (1-D, in the owner's entry order) at ``x``.

        The compiled function alone, without building a sparse tensor: for a solver that
        keeps its own index arrays (the owner's ``rows`` and ``cols`` order).
        """
        refuse_in_transform(f"{type(self._owner).__name__}.compile(...)")
        key = (tuple(x.shape), x.dtype)
        if key not in self._y_shapes:
            self._y_shapes[key] = self._prepare(x)  # validates x and fn(x) eagerly, once
        state = torch.get_rng_state()
        # under no_grad: the Jacobian comes out detached, as the eager call's does, and the
        # compiled graph is forward-only (a function of parameters that require grad would
        # otherwise get a backward graph too: 0.146 against 0.095 ms on an MLP of 64 rows)
        try:
            with torch.no_grad():
                if self.compile_seconds is None:
                    start = time.perf_counter()
                    out = self._first(x)
                    self.compile_seconds = time.perf_counter() - start
                    return out
                if self.route == "eager":
                    return self._eager(x)
                return self._recover(self._compiled(x.detach(), *self._seeds(x.dtype)))
        finally:
            torch.set_rng_state(state)

    def _first(self, x: torch.Tensor) -> torch.Tensor:
        """Compile every candidate, keep the fastest over 3 calls, or the eager call if it is
        faster still (then :attr:`route` is ``"eager"``)."""
        best, out = None, None
        for name, (compiled, seeds, recover) in self._candidates.items():
            try:
                got = recover(compiled(x.detach(), *seeds(x.dtype)))
            except Exception as err:  # torch.compile's errors have many types
                if type(err).__module__.startswith(("torch._dynamo", "torch._inductor")):
                    lines = [ln.strip() for ln in str(err).splitlines() if ln.strip()]
                    first = " ".join(lines[:2]).rstrip(".")
                    raise RuntimeError(
                        f"torch.compile (backend={self.backend!r}, fullgraph="
                        f"{self._fullgraph}) failed on {getattr(self.fn, '__name__', 'fn')}: "
                        f"{type(err).__name__}: {first}. The eager call (without .compile) "
                        f"still runs it; with fullgraph=False torch runs what it cannot "
                        f"capture eagerly"
                    ) from err
                raise
            time_ = best_of_3(functools.partial(_run, compiled, seeds, recover, x))
            if best is None or time_ < best[0]:
                best, out = (time_, name), got
        assert best is not None and out is not None
        if best_of_3(lambda: self._eager(x)) < best[0]:
            self.route = "eager"
        self.mode = best[1]
        self._compiled, self._seeds, self._recover = self._candidates[self.mode]
        self._candidates = {self.mode: self._candidates[self.mode]}
        return out

    def __call__(self, x: torch.Tensor, *, layout: torch.layout = torch.sparse_coo,
                 ) -> torch.Tensor:
        """The sparse Jacobian or Hessian at ``x``, in ``layout`` (as the eager call)."""
        check_layout(layout)
        values = self.values(x)
        y_shape = self._y_shapes[(tuple(x.shape), x.dtype)]
        return self._assemble(values, y_shape, tuple(x.shape), layout)


def _run(compiled, seeds, recover, x: torch.Tensor) -> torch.Tensor:
    return recover(compiled(x.detach(), *seeds(x.dtype)))
