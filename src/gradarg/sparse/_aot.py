"""A compiled pass packaged ahead of time: traced without Dynamo, loaded in a later process.

:meth:`gradarg.sparse.CompiledSparse.package` writes the winner of the first call (its mode
and inductor options) as an AOTInductor package: the pure pass is traced to an ATen graph by
``torch.fx.experimental.proxy_tensor.make_fx`` (no Dynamo), the tensors ``fn`` captures are
turned from baked-in constants into inputs, and ``torch.export.export`` plus
``torch._inductor.aoti_compile_and_package`` compile it to a shared library in a ``.pt2``
file (https://docs.pytorch.org/docs/stable/torch.compiler_aot_inductor.html).  A later
process whose ``fn`` has the same :func:`fingerprint` finds the file and loads it with
``torch._C._aoti.AOTIModelPackageLoader``: 0.01 s, against 5-10 s for the public
``torch._inductor.aoti_load_package``, which imports inductor and Dynamo first (measured in
``benchmarks/compiled_later_process.py``).  The public loader is used where the private
one is missing (:func:`load`; ``public=True`` forces it).  A call is then the loader's
``run`` on ``[x, *seeds, *captured tensors]``: no Dynamo guards, no compiled-region wrapper.

**Never stale.**  The file name is a SHA-256 of everything the traced graph depends on
(:func:`fingerprint`): the bytecode, constants and names of ``fn`` and of every Python
function it reaches through its closure, defaults and the globals its code names; the
values of the numbers, strings and other immutable objects found there; the shape, strides,
dtype and device of every tensor found there (their values are inputs, read at each call);
``x``'s shape and dtype; the seeds and the mode; inductor's options; torch's and Python's
versions and the source of gradarg's passes.  What it cannot describe exactly (a mutable
container, an object of another type, a module's attributes) makes the function
unpackable (:class:`Unpackable`), and it stays with ``torch.compile``.  Within a process,
each call checks that every object the fingerprint read is still the same object and every
tensor still has its shape, strides and dtype (:class:`Packaged`); a change raises
:class:`Stale`, and the owner goes back to ``torch.compile``.

**torch's options for a later process, measured** (``benchmarks/compiled_later_process.py``,
torch 2.13, one thread, a fresh interpreter sharing the first process's cache folder; the
pattern read from a file; on a machine of 2 cores shared with 8 other jobs (load average
10-12), where ``import torch`` took 3.4-16 s against 2.6 s quiet: read the ratios, and the
seconds after construction, not the start-up):

==========================  =====================  =======================  ==================
option                      after construction     Dynamo imported          per call
==========================  =====================  =======================  ==================
torch.compile + torch's     9-50 s (3.6 s quiet,   yes (its start-up:       guards + wrappers
caches + remembered winner  issue 45)              1.6-1.9 s quiet)
save/load_cache_artifacts   173 s (MLP, below)     yes                      guards + wrappers
AOTI package, public        38 s (MLP)             yes (inductor's import)  the loader's run
``aoti_load_package``
AOTI package, private       0.01-0.16 s (7 of 7)   no                       the loader's run
loader (kept)
make_fx + ``compile_fx``    46 s (MLP)             yes (inductor's import)  inductor's wrapper
==========================  =====================  =======================  ==================

The cache artifacts carry torch's caches, not gradarg's remembered choice, so a process that
loads them into an empty folder compiles and times every candidate again (and Dynamo traces
each).  With a package, the later process's whole run (``import torch`` included) was
3.7 and 4.4 s on the two functions measured at the lightest load (Rosenbrock + Powell, minimal
surface; ``import torch`` 2.9 and 3.4 s there).

A strict ``torch.export`` of the pure pass fails inside ``torch.func``'s transforms ("Cannot
access data pointer of Tensor that doesn't have storage"), and a non-strict one lifts
functorch's wrapped tensors as constants that AOTInductor cannot read; ``make_fx`` traces
through the transforms to plain ATen operations, which export and AOTInductor take.  So the
floor of a later process is ``import torch`` itself, then ``import gradarg`` (a few rooms of it:
0.08 s for a sparse call, Dynamo never imported) and the user's own colouring: the package adds
0.01-0.04 s.  On a quiet Intel Xeon (``nox -s bench-asdex``, one thread), with ``import
torch`` at 0.78 s, a later process had its first compiled result 0.91-0.99 s after it was
started on all seven functions.  The first process pays the AOTInductor build once (5-7 s
there, 60-95 s under the load above, on top of the first ``torch.compile``; 11.8 -> 17.6 s
on an AMD EPYC, Burgers and the MLP, cold caches).  A package is made by default where it
can be (``compile(..., package=None)``): from the second run of a script on, the build has
paid for itself (a later process with ``torch.compile``'s function alone paid its start-up
and a compile of the winner, 2-3 s, in every run), and every call is faster.

**The compiled call, before (``torch.compile``'s function) and after (the package's), same
``CompiledSparse``, same process** (µs per ``jit(x)``; interleaved: one call of each in
turn, medians of 300, and their ratio; in a row: 300 calls, median of 5 runs; under the
load above, so
only the ratios carry over; asdex's jitted call on a quiet machine, issue 38's closing
note, in a row: Burgers 26, Gray-Scott 92, MLP 49 µs):

==================  ===================  =================  ======
function            interleaved          in a row           ratio
==================  ===================  =================  ======
Burgers n=2000      117 -> 50            1084 -> 422        2.3×
Gray-Scott 2x48x48  467 -> 190           4152 -> 1908       2.5×
Rosenbrock+Powell   214 -> 111           527 -> 240         1.9×
minimal surface     871 -> 560           1622 -> 822        1.6×
tridiagonal + mean  139 -> 65            253 -> 98          2.1×
+ dense column      196 -> 87            447 -> 164         2.3×
per-sample MLP      210 -> 98 (221 ->    2251 -> 801        2.1×
                    98 in another run)   (4129 -> 1229)
==================  ===================  =================  ======

Where a packaged call's time goes (Burgers, interleaved, same load): the loader's ``run``
15.6 µs, the checks of :class:`Packaged` and its input list 4.5 µs, then the owner's
recovery (``index_select``, 4.6 µs), grad-mode switch and transform check (about 10 µs),
and the sparse tensor; Dynamo's guard check and the compiled-region, AOTAutograd and
inductor wrappers (17-20 µs quiet) are gone.

Tensor values used through Python (``.item()``, ``if t.sum() > 0``) would be baked into a
``make_fx`` trace: packaging is therefore refused unless ``torch.compile`` captured the
same pass as one graph (``fullgraph=True``), which such code fails.

May import torch and :mod:`gradarg.sparse._remember` (the memory's folder and key).
"""

from __future__ import annotations

import builtins
import hashlib
import json
import os
import sys
import tempfile
import types
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch

from . import _remember

__all__ = ["Packaged", "Stale", "Unpackable", "build", "find", "fingerprint", "load",
           "package_path"]

VERSION = 1  # of the package's layout and key

_IMMUTABLE = (type(None), bool, int, float, complex, str, bytes, torch.dtype, torch.device,
              torch.layout, torch.memory_format)
_LIBRARY = (types.BuiltinFunctionType, types.ModuleType, type(torch.add), torch._ops.OpOverloadPacket,
            torch._ops.OpOverload, types.MethodDescriptorType, types.WrapperDescriptorType,
            types.MethodWrapperType, types.GetSetDescriptorType, type)
_LIBRARIES = ("torch", "numpy", "builtins", "math", "cmath", "operator", "_operator",
              "functools", "_functools")
# gradarg's own code that the packaged graph runs: a change of it changes the key
_SOURCES = ("passes.py", "modes.py", "_aot.py")


class Unpackable(ValueError):
    """``fn`` reaches something :func:`fingerprint` cannot describe exactly."""


class Stale(RuntimeError):
    """An object the package was traced with changed since it was loaded."""


class _Walk:
    """What :func:`fingerprint` found: the text, the objects to check (getter, object) and
    the tensors (getter, shape, strides, dtype), in a fixed order."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.same: list[tuple[Callable[[], Any], Any]] = []
        self.tensors: list[tuple[Callable[[], Any], tuple[int, ...], tuple[int, ...],
                                 torch.dtype]] = []
        self._seen: dict[int, int] = {}  # id -> position of a function already walked

    def visit(self, obj: Any, get: Callable[[], Any], depth: int = 0) -> None:
        if depth > 50:
            raise Unpackable("fn reaches objects nested more than 50 deep")
        self.same.append((get, obj))
        if isinstance(obj, torch.Tensor):
            if type(obj) not in (torch.Tensor, torch.nn.Parameter) or obj.layout != torch.strided \
                    or obj.device.type != "cpu":
                raise Unpackable(f"fn captures a {type(obj).__name__} on {obj.device} "
                                 f"({obj.layout}); only plain CPU strided tensors are packaged")
            self.same.pop()  # a tensor may be replaced by one of the same shape: an input
            self.tensors.append((get, tuple(obj.shape), obj.stride(), obj.dtype))
            self.text.append(f"T{tuple(obj.shape)}{obj.stride()}{obj.dtype}{obj.device}")
            return
        if isinstance(obj, _IMMUTABLE):
            self.text.append(f"{type(obj).__qualname__}:{obj!r}")
            return
        if isinstance(obj, tuple):
            self.text.append(f"tuple{len(obj)}(")
            for i in range(len(obj)):
                self.visit(obj[i], _item(get, i), depth + 1)
            self.text.append(")")
            return
        if isinstance(obj, types.FunctionType) and not _is_torch(obj):
            self._function(obj, get, depth)
            return
        if isinstance(obj, types.ModuleType):
            self.text.append(f"module {obj.__name__}")
            return
        if isinstance(obj, (*_LIBRARY, types.FunctionType)) and _is_library(obj):
            self.text.append(f"library {type(obj).__qualname__} "
                             f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', obj)!r}")
            return
        raise Unpackable(f"fn reaches a {type(obj).__module__}.{type(obj).__qualname__}, "
                         f"which a package cannot describe exactly")

    def _function(self, fn: types.FunctionType, get: Callable[[], Any], depth: int) -> None:
        if id(fn) in self._seen:
            self.text.append(f"seen {self._seen[id(fn)]}")
            return
        self._seen[id(fn)] = len(self._seen)
        code = fn.__code__
        self.same.append((_attr(get, "__code__"), code))
        self.text.append(f"fn {fn.__module__}.{fn.__qualname__} {_code(code)}")
        for name in ("__defaults__", "__kwdefaults__"):
            value = getattr(fn, name)
            if isinstance(value, dict):
                raise Unpackable(f"{fn.__qualname__} has keyword-only defaults")
            self.visit(value, _attr(get, name), depth + 1)
        for i, cell in enumerate(fn.__closure__ or ()):
            try:
                value = cell.cell_contents
            except ValueError:  # an empty cell (a name assigned later)
                raise Unpackable(f"{fn.__qualname__} has an empty closure cell") from None
            self.text.append(f"cell {code.co_freevars[i]}")
            self.visit(value, _cell(get, i), depth + 1)
        glob = fn.__globals__
        names = sorted(_names(code))
        for name in names:
            if name in glob:
                value = glob[name]
                self.text.append(f"global {name}")
                self.visit(value, _global(glob, name), depth + 1)
                if isinstance(value, types.ModuleType):  # torch.tanh: a patched op is a change
                    for attr in names:
                        if attr != name and attr in vars(value):
                            self.text.append(f"attribute {name}.{attr}")
                            self.visit(vars(value)[attr], _attr(_global(glob, name), attr),
                                       depth + 1)
            elif hasattr(builtins, name):
                self.text.append(f"builtin {name}")


def _is_library(obj: Any) -> bool:
    """A builtin, a torch or numpy operator or class, a ``math`` / ``operator`` function:
    code keyed by the versions, not walked."""
    module = getattr(obj, "__module__", None) or getattr(getattr(obj, "__objclass__", None),
                                                         "__module__", None) or ""
    return module.split(".")[0] in _LIBRARIES


def _is_torch(fn: types.FunctionType) -> bool:
    """A function of torch's or numpy's own Python (its version is keyed; not walked)."""
    module = fn.__module__ or ""
    return module.split(".")[0] in ("torch", "numpy")


def _item(get: Callable[[], Any], i: int) -> Callable[[], Any]:
    return lambda: get()[i]


def _attr(get: Callable[[], Any], name: str) -> Callable[[], Any]:
    return lambda: getattr(get(), name)


def _cell(get: Callable[[], Any], i: int) -> Callable[[], Any]:
    return lambda: get().__closure__[i].cell_contents


def _global(glob: dict[str, Any], name: str) -> Callable[[], Any]:
    return lambda: glob[name]


def _names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


def _code(code: types.CodeType) -> str:
    consts = ",".join(_code(c) if isinstance(c, types.CodeType) else f"{type(c).__name__}:{c!r}"
                      for c in code.co_consts)
    return (f"{code.co_code.hex()}|{consts}|{','.join(code.co_names)}|"
            f"{','.join(code.co_varnames)}|{','.join(code.co_freevars)}")


def fingerprint(fn: Callable[..., Any]) -> _Walk:
    """What the traced graph of ``fn`` depends on, and where to read it again.

    Raises
    ------
    Unpackable
        ``fn`` reaches an object that cannot be described exactly (a list, a dict, an
        ``nn.Module``, an object of a user class, a tensor that is not a plain CPU one).
    """
    if not isinstance(fn, types.FunctionType):
        raise Unpackable(f"fn is a {type(fn).__name__}; only Python functions are packaged")
    walk = _Walk()
    walk.visit(fn, lambda: fn)
    return walk


def _sources() -> str:
    here = Path(__file__).parent
    h = hashlib.sha256()
    for name in _SOURCES:
        h.update((here / name).read_bytes())
    return h.hexdigest()


def package_path(memory_key: str, mode: str, variant: str, walk: _Walk,
                 seeds: Sequence[torch.Tensor], options: dict[str, Any]) -> str:
    """The package's file for these inputs (``memory_key`` names the owner, the pattern,
    ``x``'s shape and dtype, the backend)."""
    h = hashlib.sha256(f"gradarg-aot {VERSION} torch {torch.__version__} python "
                       f"{sys.version} {_sources()} {memory_key} {mode} {variant}".encode())
    h.update(json.dumps(options, sort_keys=True, default=repr).encode())
    for seed in seeds:
        h.update(f"{tuple(seed.shape)}{seed.dtype}".encode())
        h.update(seed.detach().contiguous().numpy().tobytes())
    h.update("\0".join(walk.text).encode())
    return os.path.join(os.path.dirname(_remember.memory_dir()), "packages",
                        h.hexdigest() + ".pt2")


def build(pure: Callable[..., torch.Tensor], walk: _Walk, x: torch.Tensor,
          seeds: Sequence[torch.Tensor], path: str, options: dict[str, Any]) -> None:
    """Trace ``pure(x, *seeds)`` with ``make_fx``, make the tensors of ``walk`` inputs after
    the seeds, compile with AOTInductor (inductor ``options``) and write ``path``
    (atomically).

    Raises
    ------
    Unpackable
        The graph holds a tensor constant that ``fn`` does not reach through ``walk`` (it
        would be baked in).
    """
    from torch.fx.experimental.proxy_tensor import make_fx

    tensors = [get() for get, *_ in walk.tensors]
    # make_fx runs pure on real tensors: a draw from the global generator is undone
    with torch.no_grad(), torch.random.fork_rng(devices=[]):
        gm = make_fx(pure)(x, *seeds)
    graph = gm.graph
    last = [n for n in graph.nodes if n.op == "placeholder"][-1]
    captured = []  # one input per tensor of walk, in its order, after x and the seeds
    for i in range(len(tensors)):
        with graph.inserting_after(last):
            last = graph.placeholder(f"captured_{i}")
        captured.append(last)
    erased = set()
    for node in list(graph.nodes):
        if node.op != "get_attr" or not isinstance(value := getattr(gm, node.target), torch.Tensor):
            continue
        index = next((i for i, t in enumerate(tensors) if t is value), None)
        if index is None:
            if all(u.op == "call_function" and u.target is torch.ops.aten.lift_fresh_copy.default
                   for u in node.users):
                continue  # a literal made in fn's code (torch.tensor(2.0)): the code is keyed
            raise Unpackable(f"the traced graph holds a tensor of shape {tuple(value.shape)} "
                             "that fn does not capture visibly (through its closure, "
                             "defaults or globals)")
        node.replace_all_uses_with(captured[index])
        graph.erase_node(node)
        erased.add(node.target)
    for target in erased - {n.target for n in graph.nodes if n.op == "get_attr"}:
        delattr(gm, target)  # the caller's tensor, no longer a constant of the graph
    graph.lint()
    gm.recompile()
    args = (x, *seeds, *tensors)
    with warnings.catch_warnings():  # torch's own deprecation notices while it packages
        warnings.simplefilter("ignore", FutureWarning)
        warnings.simplefilter("ignore", UserWarning)
        _compile_package(gm, args, path, options)


def _compile_package(gm: torch.fx.GraphModule, args: tuple[torch.Tensor, ...], path: str,
                     options: dict[str, Any]) -> None:
    from torch._inductor import aoti_compile_and_package

    exported = torch.export.export(gm, args, strict=False)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".pt2")
    os.close(fd)
    try:
        aoti_compile_and_package(exported, package_path=tmp, inductor_configs=dict(options))
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def find(fn: Callable[..., Any], path_of: Callable[[_Walk], str]) -> Packaged | None:
    """The package for ``fn`` (``path_of`` its file from its :func:`fingerprint`), loaded;
    ``None`` if ``fn`` is unpackable, there is no such file, or it does not load."""
    try:
        walk = fingerprint(fn)
        path = path_of(walk)
        return Packaged(load(path), walk, path) if os.path.exists(path) else None
    except Exception:  # noqa: BLE001 - unpackable, unreadable, corrupt: torch.compile instead
        return None


PUBLIC = False  # load with the public torch._inductor.aoti_load_package (benchmarks set it)


def load(path: str, *, public: bool = False) -> Any:
    """The package at ``path`` loaded: ``torch._C._aoti.AOTIModelPackageLoader`` (no import
    of inductor), or ``torch._inductor.aoti_load_package``'s model where that is missing or
    ``public``."""
    loader = getattr(getattr(torch._C, "_aoti", None), "AOTIModelPackageLoader", None)
    if loader is None or public or PUBLIC:
        from torch._inductor import aoti_load_package

        return aoti_load_package(path).loader
    return loader(path, "model", False, 1, -1)


class Packaged:
    """A loaded package called as the compiled pass: ``(x, *seeds) -> flat``.

    Each call checks the objects of ``walk`` (the same objects, tensors of the same shape,
    strides and dtype: :class:`Stale` otherwise) and passes the captured tensors after the
    seeds.
    """

    def __init__(self, runner: Any, walk: _Walk, path: str) -> None:
        self.runner = runner
        self.path = path
        self._same = walk.same
        self._tensors = walk.tensors

    def __call__(self, x: torch.Tensor, *seeds: torch.Tensor) -> torch.Tensor:
        for get, obj in self._same:
            if get() is not obj:
                raise Stale("an object the package was traced with changed")
        inputs = [x if x.is_contiguous() else x.contiguous(), *seeds]
        for get, shape, stride, dtype in self._tensors:
            t = get()
            if (not isinstance(t, torch.Tensor) or t.shape != shape or t.stride() != stride
                    or t.dtype != dtype):
                raise Stale("a tensor the package was traced with changed shape or dtype")
            inputs.append(t)
        return self.runner.run(inputs)[0]
