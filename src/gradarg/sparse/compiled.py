"""A compressed Jacobian or Hessian compiled once for one function, then called many times.

``SparseJacobian.compile(fn)`` and ``SparseHessian.compile(f)`` return a
:class:`CompiledSparse`: the compressed pass (one ``torch.func.vjp`` / ``jvp`` batched by
``torch.func.vmap`` over the colours, or ``jvp`` of ``grad`` for a Hessian), written as one pure
function of ``x`` and handed to ``torch.compile``, then the recovery of the entries from its
result (one ``index_select``, or the acyclic substitution's few operations), run eagerly.  A call
is then a handful of fused kernels instead of the eager batched pass's hundreds of operator calls.
The recovery stays outside because inductor fuses a gather into the kernels making its input,
recomputing them per entry: 1.9× slower on the minimal-surface Hessian, 3.3× on Gray-Scott,
faster on none of the seven functions of ``benchmarks/asdex_side_by_side.py``.

**What is kept where.**  Compiling is paid once per machine.  torch keeps inductor's FX graph
and AOTAutograd caches on disk (``$TORCHINDUCTOR_CACHE_DIR``, default
``<tmp>/torchinductor_<user>``; graphs with a traced ``torch.func.jvp`` made cacheable:
:func:`cacheable`).  Dynamo's trace is not cached, so the first call's choice (mode, inductor
options, compiled or eager) is remembered beside them (:mod:`gradarg.sparse._remember`) and a
later process compiles only the winner: 0.18-0.57 s after torch.compile's own start-up
(1.6-1.9 s), against 2.7-5.0 s in the first process (seven functions of
``benchmarks/asdex_side_by_side.py``, torch 2.13, one thread), or loads its package.

**A package by default.**  Where it can (inductor, no torch mode, ``fullgraph=True``, a
``fn`` whose changes a key can follow), the first call also writes the winner as an
AOTInductor package, keyed by everything its graph depends on (:mod:`gradarg.sparse._aot`,
where torch's other options are measured), and calls run the package's loader: no guards, no
wrappers.  A later ``compile`` of the same function loads it instead of compiling, never
importing Dynamo or inductor.  ``package=False`` keeps ``torch.compile``'s function.

**A call.**  ``torch.compile(..., dynamic=None)`` on a function made for one input shape and
dtype (:mod:`gradarg.sparse._candidates`; inductor's options:
:mod:`gradarg.sparse._compile_options`); grad mode off; the global random state saved and
restored only when a call draws from it; the recovery and the owner's assembly.  With
``package=False``, torch's own cost remains: Dynamo's guards (8-11 µs: several hundred, most
on ``torch.func``'s Python) and the wrappers (about 12 µs); a package's call has neither.

It pays where a function is called many times at one input shape (Newton iterations).

May import torch, ``gradarg.core.speeds`` (a timing helper) and gradarg.sparse's ``_layouts``,
``_remember``, ``_aot``, ``_inductor_pass``, ``_compile_options``, ``_candidates``; its owners
(``compressed``, ``hessian``) give it their modes (:class:`gradarg.sparse.modes.Mode`: the
pure pass, the seeds, the recovery), so nothing here knows a colouring.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import torch

from ..core.speeds import best_of_3
from . import _aot, _inductor_pass, _remember
from ._candidates import compile_candidate, fastest
from ._compile_options import (
    TRANSPOSED,
    VARIANTS,
    cacheable,
    check_compile_options,
    compile_parameters,
    known_variant,
    raise_compile_error,
    resolve_backend,
    variant_options,
)
from ._layouts import check_layout, check_x, refuse_in_transform

if TYPE_CHECKING:
    from .modes import Mode

__all__ = ["TRANSPOSED", "VARIANTS", "CompiledSparse", "cacheable", "compile_parameters", "resolve_backend"]

class CompiledSparse:
    r"""A sparse Jacobian or Hessian of one function, compiled by ``torch.compile``.

    Built by :meth:`gradarg.SparseJacobian.compile` or :meth:`gradarg.SparseHessian.compile`;
    calling it with ``x`` returns what the eager call ``sj(fn, x)`` / ``sh(f, x)`` returns
    (same entries, same layout rules), computed by one compiled function of ``x``.

    The first call at a new input shape or dtype traces ``fn`` under ``torch.func``'s
    transforms and compiles (``torch.compile(..., backend=backend, fullgraph=fullgraph,
    options=...)``; see https://pytorch.org/docs/stable/generated/torch.compile.html),
    reported in :attr:`compile_seconds`; later calls at that shape and dtype reuse it.  The
    first process on a machine compiles and times the candidates (:attr:`choice`
    ``"timed"``) and, by default, packages the winner (:meth:`package`); a later process
    loads the package and compiles nothing, or finds the choice and compiles only the winner
    (``"remembered"``).  The module's docstring says what is kept where, with timings.

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
    variant : str
        The inductor options kept: ``"vector tails"`` (inductor's defaults) or ``"scalar
        tails"`` (the keys of ``gradarg.sparse.compiled.VARIANTS``), followed by ``" + transposed small matmuls"``
        when ``gradarg.sparse._inductor_pass`` won; ``"vector tails"`` for other backends
        or with a torch ``mode``.
    route : str
        ``"compiled"``, or ``"eager"`` when at the first call the owner's eager call was
        faster than the compiled function (best of 3 calls each): a small convolutional network
        on a batch took 2.1 ms compiled and 1.7 ms eagerly.  Calls then go to the eager call:
        as measured at the first call, compiling never makes a call slower.
    choice : str or None
        How the first call chose: ``"timed"`` (the candidates compiled and timed here, the
        winner remembered on this machine) or ``"remembered"`` (the winner read from an
        earlier process's memory, only it compiled); ``None`` before it.
    artifact : str or None
        What calls run: ``"torch.compile"``, ``"package"`` (an AOTInductor package,
        :meth:`package`, made here or loaded from an earlier process) or ``None`` (eager).
    why_not_packaged : str or None
        Why calls do not run a package (``package=False``, the backend, what ``fn`` reaches
        that a key cannot follow, AOTInductor's error, a change since it was traced, the
        eager route); ``None`` when they do, or before the first call.
    compiled_candidates : int
        Functions handed to ``torch.compile`` by the first call (0 when a remembered eager
        route or a package needs none).
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
        modes: Sequence[Any],  # Mode objects (a name the API page cannot link)
        prepare: Callable[[torch.Tensor], tuple[int, ...]],
        eager: Callable[[torch.Tensor], torch.Tensor],
        assemble: Callable[[torch.Tensor, tuple[int, ...], tuple[int, ...], torch.layout],
                           torch.Tensor],
        *,
        pattern: tuple[torch.Tensor, ...] = (),
        backend: str,
        mode: str | None,
        fullgraph: bool,
        package: bool | None = None,
    ) -> None:
        check_compile_options(backend, mode, fullgraph, package)
        self._owner = owner
        self.fn = fn
        self.passes: int = owner.passes
        self.backend = resolve_backend(backend)
        self.compile_seconds: float | None = None
        self.choice: str | None = None
        self.compiled_candidates = 0
        self._modes = {m.name: m for m in modes}
        self.mode = modes[0].name
        self.variant = next(iter(VARIANTS))
        self.route = "compiled"
        self._name = f"{type(owner).__name__}.compile(...)"
        self._eager = eager
        self._prepare = prepare
        self._assemble = assemble
        self._pattern = pattern
        self._torch_mode = mode
        self._fullgraph = fullgraph
        self._pures = {m.name: m.pure(fn) for m in modes}
        # inductor options (torch.compile takes a mode or options, not both): the AOTAutograd
        # cache for jvp graphs, then one variant or two; made at the first compile, since
        # importing inductor loads Dynamo (1.5-5 s), which a packaged call never needs
        self._inductor = self.backend == "inductor" and mode is None
        self._variants = list(VARIANTS) if self._inductor else list(VARIANTS)[:1]
        self._ready: dict[tuple[torch.Size, torch.dtype], _Ready] = {}
        self._packages = self._inductor and fullgraph and package is not False  # may be loaded
        self.artifact: str | None = None
        why = " (backend='auto' found no C++ compiler)" if backend == "auto" else ""
        if package and not self._inductor:
            raise ValueError(f"package=True needs inductor; the backend is {self.backend!r}{why}")
        if package:
            _aot.fingerprint(fn)  # Unpackable (a ValueError) names what a key cannot follow
        # True: package or raise; "auto" (package=None): package where it can; False: never
        self._package_asked: bool | str = package if package is not None else "auto"
        self.why_not_packaged: str | None = None
        if package is False:  # neither made nor loaded (self._packages)
            self.why_not_packaged = "package=False"
        elif package is None and not (self._inductor and fullgraph):
            self._package_asked = False
            self.why_not_packaged = (
                f"a package needs backend='inductor', no torch mode and fullgraph=True; "
                f"here backend={self.backend!r}{why}, mode={mode!r}, fullgraph={fullgraph}")

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
        are timed against it at the first call), with the owner's eager call, whose coalesced
        COO values are the entries in order, for the ``"eager"`` route.  ``options``:
        ``pattern`` (tensors naming the pattern in the machine's memory), ``backend``,
        ``mode``, ``fullgraph``."""

        def eager(x: torch.Tensor) -> torch.Tensor:
            return owner(fn, x).values()

        return cls(owner, fn, modes, prepare, eager, assemble, **options)

    def __repr__(self) -> str:
        seconds = "not yet" if self.compile_seconds is None else f"{self.compile_seconds:.2f} s"
        return (f"CompiledSparse({type(self._owner).__name__}, mode={self.mode!r}, "
                f"passes={self.passes}, backend={self.backend!r}, route={self.route!r}, "
                f"artifact={self.artifact!r}, compiled: {seconds})")

    def values(self, x: torch.Tensor) -> torch.Tensor:
        """The values of the pattern's entries (1-D, in the owner's entry order) at ``x``.

        The compiled function alone, without building a sparse tensor: for a solver that
        keeps its own index arrays (the owner's ``rows`` and ``cols`` order).
        """
        return self._values(x)[0]

    def __call__(self, x: torch.Tensor, *, layout: torch.layout = torch.sparse_coo) -> torch.Tensor:
        """The sparse Jacobian or Hessian at ``x``, in ``layout`` (as the eager call)."""
        if layout is not torch.sparse_coo:
            check_layout(layout)
        values, ready = self._values(x)
        return self._assemble(values, ready.y_shape, ready.x_shape, layout)

    def _values(self, x: torch.Tensor) -> tuple[torch.Tensor, _Ready]:
        refuse_in_transform(self._name)
        try:
            ready = self._ready[x.shape, x.dtype]
        except (KeyError, AttributeError):  # a new shape or dtype, or not a tensor
            return self._first(x)
        if x.requires_grad:
            x = x.detach()
        # grad off: the Jacobian comes out detached, as the eager call's does, and the
        # compiled graph is forward-only (a function of parameters that require grad would
        # otherwise get a backward graph too: 0.146 against 0.095 ms on an MLP of 64 rows)
        grad = torch.is_grad_enabled()
        torch.set_grad_enabled(False)
        state = torch.get_rng_state() if ready.rng else None
        try:
            if ready.compiled is None:
                return self._eager(x), ready
            return ready.recover(ready.compiled(x, *ready.seeds)), ready
        except _aot.Stale as stale:  # what a package was traced with changed: torch.compile
            self._packages = False
            if self._package_asked == "auto":  # not one AOTInductor build per change
                self._package_asked = False
                self.why_not_packaged = f"{stale}: torch.compile's guards follow such changes"
            del self._ready[x.shape, x.dtype]
            return self._first(x)
        finally:
            torch.set_grad_enabled(grad)
            if state is not None:
                torch.set_rng_state(state)

    def package(self, x: torch.Tensor, *, public: bool = False) -> str:
        """Write the compiled pass at ``x``'s shape and dtype as an ahead-of-time package,
        which a later process loads instead of compiling; the package's file.

        The pass chosen at the first call (made now if needed) is traced without Dynamo,
        its captured tensors made inputs, compiled by AOTInductor and written beside torch's
        caches (``gradarg.sparse._aot``).  Here and in any later process that compiles
        the same function (code, closure, globals it reads, captured tensors' shapes and
        dtypes, pattern, ``x``'s shape and dtype), calls then run the package: no Dynamo,
        no inductor import, no guards.  Building is an AOTInductor compile (longer than
        the first ``torch.compile``), once per machine and function.

        Parameters
        ----------
        x : torch.Tensor
            An input of the shape and dtype to package (its values are not kept).
        public : bool
            Load with ``torch._inductor.aoti_load_package`` (imports inductor and Dynamo:
            seconds) rather than the loader it wraps.

        Raises
        ------
        ValueError
            The compiled function cannot be packaged: another backend or a torch ``mode``
            (only inductor's options are packaged), ``fullgraph=False`` (a trace without
            Dynamo could bake in what Dynamo left to Python), the eager route won, or ``fn``
            reaches an object whose changes a key cannot follow (a list, a dict, a module,
            an object of a user class: ``gradarg.sparse._aot.Unpackable`` names it).
        """
        if not (self._inductor and self._fullgraph):
            raise ValueError(
                f"package() needs backend='inductor', no torch mode and fullgraph=True; this "
                f"compiled function has backend={self.backend!r}, mode={self._torch_mode!r}, "
                f"fullgraph={self._fullgraph}")
        walk = _aot.fingerprint(self.fn)  # Unpackable (a ValueError) names what is not
        self._values(x)  # the first call at this shape and dtype, if not made yet
        ready = self._ready[x.shape, x.dtype]
        if ready.compiled is None:
            raise ValueError("package(): the eager call was faster than the compiled one at "
                             "the first call (route='eager'); there is nothing to package")
        path = self._package_path(x, walk)
        if getattr(ready.compiled, "path", None) != path:  # not this package yet
            if not os.path.exists(path):
                _aot.build(self._pures[self.mode], walk, x.detach(), ready.seeds, path,
                           variant_options(self.variant))
            packaged = _aot.Packaged(_aot.load(path, public=public), walk, path)
            self._ready[x.shape, x.dtype] = ready._replace(compiled=packaged)
            self.artifact = "package"
        return path

    def _package_path(self, x: torch.Tensor, walk: Any) -> str:
        return _aot.package_path(self._memory_key(x), self.mode, self.variant, walk,
                                 self._modes[self.mode].seeds(x.dtype),
                                 VARIANTS[self.variant.partition(" + ")[0]])

    def _packaged(self, x: torch.Tensor, key: str,
                  ) -> tuple[torch.Tensor, Callable[..., torch.Tensor]] | None:
        """The remembered winner's package (:meth:`package`), loaded and run once; ``None``
        where there is none, or it fails to load or run (then torch.compile runs)."""
        packaged = _aot.find(self.fn, lambda walk: self._package_path(x, walk))
        try:
            out = None if packaged is None else _call(packaged, self._modes[self.mode], x)
        except Exception:  # noqa: BLE001 - a corrupt or foreign file: compile instead
            out = None
        if out is None or packaged is None:
            return None
        self.artifact = "package"
        return out, packaged

    # ------------------------------------------------------------------ the first call

    def _first(self, x: torch.Tensor) -> tuple[torch.Tensor, _Ready]:
        """The first call at ``x``'s shape and dtype: check ``x`` and ``fn(x)``, choose the
        candidate (remembered, or compiled and timed), record how later calls run."""
        if not isinstance(x, torch.Tensor):
            check_x(x, 0, None)  # the TypeError
        state = torch.get_rng_state()
        start = time.perf_counter()
        try:
            y_shape = self._prepare(x)  # validates x and fn(x) eagerly
            if x.requires_grad:
                x = x.detach()
            with torch.no_grad():
                out, compiled = self._choose(x)
                rng = False
                if compiled is not None:  # does a call draw from the global generator?
                    before = torch.get_rng_state()
                    _call(compiled, self._modes[self.mode], x)
                    rng = not torch.equal(before, torch.get_rng_state())
        finally:
            torch.set_rng_state(state)
        mode = self._modes[self.mode]
        ready = _Ready(y_shape, tuple(x.shape), compiled, mode.seeds(x.dtype), mode.recover,
                       rng)
        self._ready[x.shape, x.dtype] = ready
        if self._package_asked and compiled is not None and self.artifact != "package":
            self._package_first(x)  # calls run the package from now
            ready = self._ready[x.shape, x.dtype]
        if self.artifact == "package":
            self.why_not_packaged = None
        elif compiled is None and self.why_not_packaged is None:
            self.why_not_packaged = "the eager call was faster (route='eager')"
        if self.compile_seconds is None:
            self.compile_seconds = time.perf_counter() - start
        return out, ready

    def _package_first(self, x: torch.Tensor) -> None:
        """Package at the first call: ``package=True`` raises what :meth:`package` raises;
        the default (``package=None``) keeps ``torch.compile``'s function instead and says
        why in :attr:`why_not_packaged`."""
        try:
            self.package(x)
        except Exception as err:  # unpackable fn, AOTInductor failed: torch.compile instead
            if self._package_asked is True:
                raise
            first = (str(err).strip().splitlines() or [""])[0][:300]
            self.why_not_packaged = f"{type(err).__name__}: {first}"

    def _choose(self, x: torch.Tensor,
                ) -> tuple[torch.Tensor, Callable[..., torch.Tensor] | None]:
        """Compile the remembered winner, or every candidate, keeping the fastest over 3
        calls (or the eager call if it is faster still: then :attr:`route` is ``"eager"``),
        and remember the choice; the first result and the compiled function (``None`` for
        the eager route)."""
        try:
            key: str | None = self._memory_key(x)
        except Exception:  # noqa: BLE001 - describe() of an odd callable: no memory, only speed
            key = None
        got = None if key is None else _remember.recall(key)
        if (got is not None and got.get("mode") in self._modes
                and known_variant(got.get("variant"), self._variants, self._inductor)
                and got.get("route") in ("compiled", "eager")):
            self.choice = "remembered"
            self.mode, self.variant, self.route = got["mode"], got["variant"], got["route"]
            if self.route == "eager":
                return self._eager(x), None
            if key is not None and self._packages:
                packaged = self._packaged(x, key)
                if packaged is not None:
                    return packaged
            compiled = self._compile(self.mode, self.variant, key)
            self.artifact = "torch.compile"
            return self._run(compiled, x, self._modes[self.mode]), compiled
        self.choice, self.route = "timed", "compiled"
        fns, outs = {}, {}  # per candidate (mode, variant): the compiled function, its result
        for name in self._modes:
            first = (name, self._variants[0])
            fns[first] = self._compile(*first, key)
            outs[first] = self._run(fns[first], x, self._modes[name])
        best, seconds = self._fastest(fns, x)
        for variant in self._variants[1:]:  # the other inductor options, on the best mode
            other = (best[0], variant)
            fns[other] = self._compile(*other, key)
            outs[other] = self._run(fns[other], x, self._modes[best[0]])
            best, seconds = self._fastest({k: fns[k] for k in (best, other)}, x)
        if (self._inductor and _inductor_pass.transposed_small_matmuls() is not None
                and _inductor_pass.has_matmul(self.fn, x)):
            other = (best[0], f"{best[1]} + {TRANSPOSED}")
            fns[other] = self._compile(*other, key)
            outs[other] = self._run(fns[other], x, self._modes[best[0]])
            best, seconds = self._fastest({k: fns[k] for k in (best, other)}, x)
        self.mode, self.variant = best
        if self._eager_seconds(x) < seconds:
            self.route = "eager"
        if key is not None:
            _remember.remember(key, {"mode": self.mode, "variant": self.variant,
                                     "route": self.route})
        self.artifact = None if self.route == "eager" else "torch.compile"
        return outs[best], (None if self.route == "eager" else fns[best])

    def _memory_key(self, x: torch.Tensor) -> str:
        parts: list[object] = [type(self._owner).__name__, *self._pattern, self.backend,
                               self._torch_mode, self._fullgraph, tuple(x.shape), x.dtype,
                               self._variants, _remember.describe(self.fn)]
        for name, m in self._modes.items():
            parts += [name, *m.seeds(x.dtype)]
        return _remember.key(parts)

    def _compile(self, name: str, variant: str, key: str | None,
                 ) -> Callable[..., torch.Tensor]:
        """A fresh ``torch.compile`` of mode ``name``'s pure pass with ``variant``'s options
        (:func:`gradarg.sparse._candidates.compile_candidate`)."""
        self.compiled_candidates += 1
        return compile_candidate(self._pures[name], name, variant, key or str(id(self)),
                                 backend=self.backend, mode=self._torch_mode,
                                 fullgraph=self._fullgraph, inductor=self._inductor)

    def _fastest(self, compiled: dict[tuple[str, str], Callable[..., torch.Tensor]],
                 x: torch.Tensor) -> tuple[tuple[str, str], float]:
        """The fastest candidate at ``x`` and its seconds per call."""
        return fastest({k: functools.partial(_call, fn, self._modes[k[0]], x)
                        for k, fn in compiled.items()})

    def _eager_seconds(self, x: torch.Tensor) -> float:
        """Seconds of the owner's eager call (best of 3 calls)."""
        return best_of_3(lambda: self._eager(x))

    def _run(self, compiled: Callable[..., torch.Tensor], x: torch.Tensor,
             mode: Mode) -> torch.Tensor:
        """The first run of a compiled candidate (the compile itself), torch's compile
        errors said in a ``RuntimeError``."""
        try:
            return _call(compiled, mode, x)
        except Exception as err:
            raise_compile_error(err, getattr(self.fn, "__name__", "fn"), self.backend,
                                self._fullgraph)
            raise


class _Ready(NamedTuple):
    """How calls at one input shape and dtype run, once the first has chosen."""

    y_shape: tuple[int, ...]
    x_shape: tuple[int, ...]
    compiled: Callable[..., torch.Tensor] | None  # None: the eager call was faster
    seeds: tuple[torch.Tensor, ...]
    recover: Callable[[torch.Tensor], torch.Tensor]
    rng: bool  # a compiled call draws from the global generator: saved and restored


def _call(compiled: Callable[..., torch.Tensor], mode: Mode, x: torch.Tensor,
          ) -> torch.Tensor:
    return mode.recover(compiled(x, *mode.seeds(x.dtype)))
