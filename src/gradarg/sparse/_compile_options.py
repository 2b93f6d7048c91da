"""The options of a sparse derivative's ``compile``: backend, inductor variants, caching.

**The AOTAutograd cache** refuses a graph that calls a function it does not list as pure,
and a traced ``torch.func.jvp`` calls four of torch's own
(``torch._functorch.predispatch._jvp_increment_nesting``, ``_jvp_decrement_nesting``,
``_enter_dual_level``, ``_exit_dual_level``: forward-mode level bookkeeping); they are marked
cacheable for this torch version with inductor's ``unsafe_marked_cacheable_functions`` option
(:func:`cacheable`), safe because they are torch's code, which torch's key already covers.
Before that marking and the remembered choice, a later process took 0.36-1.6 s to compile
(every candidate traced again, the forward-mode graphs traced by AOTAutograd again).

**Inductor options** (:data:`VARIANTS`, each a timed candidate on the fastest one so far).
Loop tails: inductor vectorises a loop's remainder with masked vector loads by default; the
Rosenbrock + Powell Hessian's compiled pass took 205 µs so (its ``x.reshape(-1, 4)`` makes a
4-lane loop with a masked tail) and 63 µs without (``cpp.enable_loop_tail_vec=False``), while
the minimal-surface Hessian took 118 µs with them and 192 µs without.  Small matrix products,
for a function whose graph holds one: :mod:`gradarg.sparse._inductor_pass` computes an ``mm``
with few result columns as the transposed product (the per-sample MLP's compiled call 88 ->
78 µs).  Measured and left out: inductor decomposing the MLP's small products into
multiply-and-sum loops (73 against 77 µs for the pass alone: one fused kernel, but masked
8-wide vectors), ``cpp_wrapper`` (no change), ``cpp.simdlen=1`` (slower), ``freezing`` (it
would bake captured tensors in as constants: wrong once the caller updates them, and it turns
the AOTAutograd cache off).

May import torch, :mod:`gradarg._validate` and :mod:`gradarg.sparse._inductor_pass` (in
:func:`variant_options`).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from typing import Any, TypeVar

import torch

from .._validate import check_flag

__all__ = ["TRANSPOSED", "VARIANTS", "cacheable", "check_compile_options", "compile_parameters", "known_variant", "raise_compile_error", "resolve_backend",
           "variant_options"]

F = TypeVar("F", bound=Callable[..., Any])

# the parameters of SparseJacobian.compile and SparseHessian.compile after their first
_PARAMETERS = """\
        backend : str
            ``torch.compile``'s backend.  ``"auto"`` (default): ``"inductor"`` (C++ kernels)
            where a C++ compiler is found, else ``"aot_eager"`` (traced, run by torch's own
            kernels); :attr:`gradarg.sparse.CompiledSparse.backend` says which.
        mode : str, optional
            Passed to ``torch.compile``.  torch takes a ``mode`` or inductor options, not
            both: with a ``mode``, only inductor's defaults are compiled (no second variant,
            and graphs holding a ``torch.func.jvp`` miss the AOTAutograd cache).
        fullgraph : bool
            ``True`` (default): one graph or a ``RuntimeError`` at the first call naming
            what could not be captured; ``False`` lets torch run those parts eagerly.
        package : bool or None
            ``None`` (default): package where it can.  The first call at each input shape
            and dtype also writes the chosen compiled pass as an AOTInductor package
            (:meth:`gradarg.sparse.CompiledSparse.package`), and calls run it: no Dynamo
            guards or wrappers (0.35-0.77 times ``torch.compile``'s call on the seven
            functions of ``benchmarks/asdex_side_by_side.py``), and a later process loads it
            without compiling or importing Dynamo (its first Jacobian 1.0-1.2 s after its
            start, ``import torch`` included, against 3-4 s).  The first call of the first
            process on a machine takes an AOTInductor compile longer (11.8 -> 17.6 s on
            Burgers and the MLP there, cold caches; a package is a file of about 1.6 MB
            beside inductor's cache).  It needs inductor (``backend``
            ``"inductor"``, or ``"auto"`` finding a C++ compiler), no ``mode``,
            ``fullgraph=True`` and a ``fn`` whose changes the package's key can follow;
            otherwise, or if AOTInductor fails, calls run ``torch.compile``'s function and
            :attr:`~gradarg.sparse.CompiledSparse.why_not_packaged` says why.  ``True``: the
            same, but what cannot be packaged raises ``ValueError`` here, naming what.
            ``False``: calls run ``torch.compile``'s function (no package made or loaded)."""

# torch's forward-mode bookkeeping, called in the graph of a traced torch.func.jvp: pure torch
# code that the AOTAutograd cache does not list as safe (it bypasses the cache for such a
# graph); marked cacheable for this torch version (the value is part of the cache key)
_PREDISPATCH = ("_jvp_increment_nesting", "_jvp_decrement_nesting", "_enter_dual_level",
                "_exit_dual_level")

# inductor options compiled and timed, one after the other, on the fastest candidate so far: the
# loop tails ("vector tails" are inductor's defaults), then, for a function with a matrix
# product, the transposed small products (gradarg.sparse._inductor_pass); a variant is one
# loop-tails name, or that name + " + " + TRANSPOSED
VARIANTS: dict[str, dict[str, Any]] = {
    "vector tails": {},
    "scalar tails": {"cpp.enable_loop_tail_vec": False},
}
TRANSPOSED = "transposed small matmuls"


def cacheable() -> dict[str, Any]:
    """The inductor option that lets the AOTAutograd cache keep a graph with a traced
    ``torch.func.jvp`` (``{}`` on a torch without the option or the functions)."""
    from torch._inductor import config

    try:
        from torch._functorch import predispatch
    except ImportError:
        return {}
    if not hasattr(config, "unsafe_marked_cacheable_functions"):
        return {}
    names = [f"{predispatch.__name__}.{name}" for name in _PREDISPATCH
             if hasattr(predispatch, name)]
    return {"unsafe_marked_cacheable_functions": dict.fromkeys(names, torch.__version__)}


def variant_options(variant: str) -> dict[str, Any]:
    """Inductor's options for ``variant``: a key of :data:`VARIANTS`, or one followed by
    ``" + "`` and :data:`TRANSPOSED` (:mod:`gradarg.sparse._inductor_pass`'s pass added)."""
    tails, _, transposed = variant.partition(" + ")
    options = dict(VARIANTS[tails])
    if transposed:
        from ._inductor_pass import transposed_small_matmuls

        options["post_grad_custom_post_pass"] = transposed_small_matmuls()
    return options


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


# torch.compile's modes (its documentation; None is its default)
TORCH_COMPILE_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


def check_compile_options(backend: Any, mode: Any, fullgraph: Any, package: Any = None) -> None:
    """The options of ``.compile()``, checked when it is called rather than at the first call
    of what it returns (``TypeError`` / ``ValueError`` naming the option)."""
    if isinstance(backend, str):
        # the common names without asking torch (its list imports dynamo: seconds, once)
        if backend not in ("auto", "inductor", "aot_eager", "eager") and (
                backend not in torch.compiler.list_backends(exclude_tags=())):
            raise ValueError(
                f"backend must be 'auto' or a torch.compile backend "
                f"({', '.join(torch.compiler.list_backends())}, ...), got {backend!r}")
    elif not callable(backend):
        raise TypeError(f"backend must be a string (a torch.compile backend, or 'auto') or a "
                        f"callable backend, got {type(backend).__name__}")
    if mode is not None and (not isinstance(mode, str) or mode not in TORCH_COMPILE_MODES):
        raise ValueError(f"mode must be None or one of torch.compile's modes "
                         f"{TORCH_COMPILE_MODES}, got {mode!r}")
    check_flag("fullgraph", fullgraph)
    if package is not None:  # None: package where it can
        check_flag("package", package)
    if package and (mode is not None or not fullgraph):
        raise ValueError(f"package=True needs no torch mode and fullgraph=True (only "
                         f"inductor's options are packaged, from one graph), got mode={mode!r}, "
                         f"fullgraph={fullgraph!r}")


def raise_compile_error(err: Exception, name: str, backend: str, fullgraph: bool) -> None:
    """Raise torch.compile's error ``err`` on function ``name`` said in a ``RuntimeError``
    (Dynamo's and inductor's errors have many types); return when it is not theirs."""
    if not type(err).__module__.startswith(("torch._dynamo", "torch._inductor")):
        return
    lines = [ln.strip() for ln in str(err).splitlines() if ln.strip()]
    first = " ".join(lines[:2]).rstrip(".")
    raise RuntimeError(
        f"torch.compile (backend={backend!r}, fullgraph={fullgraph}) failed on {name}: "
        f"{type(err).__name__}: {first}. The eager call (without .compile) still runs it; "
        f"with fullgraph=False torch runs what it cannot capture eagerly") from err


def known_variant(variant: object, variants: list[str], inductor: bool) -> bool:
    """Whether ``variant`` (a remembered choice) names options a compiled function with
    ``variants`` (and inductor or not) can use."""
    if not isinstance(variant, str):
        return False
    tails, _, transposed = variant.partition(" + ")
    return tails in variants and (not transposed or (transposed == TRANSPOSED and inductor))
