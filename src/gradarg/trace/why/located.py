"""Where a recomputed forward cut the path from a tensor to the output: the torch call that took
a tensor on the path and returned one without a graph, the line of the caller's code that made
it, and, when grad mode was off there, the line that turned it off.

:func:`locate` calls the function once more (its random state forked, as
:func:`~gradarg.trace.why.diagnose.why_no_grad` does) under two public hooks:

- a :class:`torch.overrides.TorchFunctionMode` that sees every torch call made at the
  function's level (operators, ``Tensor`` methods, ``.data``, ``.detach()``, ``.item()``,
  ``torch.tensor``): the tensors with a graph that come from ``tensor`` are followed from call
  to call (:attr:`Locator.path`); a call that takes one of them and returns a floating tensor
  without a graph is a cut, and what that tensor reaches carries the cut's mark, so only cuts
  whose results reach the output are named (a mask ``x > 0`` or an ``argmax`` used to index is
  a cut that does not matter);
- :func:`sys.setprofile`, which sees the grad-mode switches torch makes in Python
  (``torch.no_grad``, ``torch.enable_grad``, ``torch.set_grad_enabled``,
  ``torch.inference_mode``: entered, called, or as decorators), each with the caller's line
  (for a decorator, the function it decorates).

Nothing is kept after the call but the facts (names, files, lines).  A call whose result left
torch (``.item()``, ``.tolist()``, ``.numpy()``) cannot be followed into the tensor made from
it again; such an exit on the path is reported as what it is, an exit seen.

May import torch and the standard library only.
"""

from __future__ import annotations

import ast
import inspect
import linecache
import os
import sys
import textwrap
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

__all__ = ["Cut", "Located", "Locator", "Site", "Switch", "Where", "call_site", "locate",
           "made_at"]

_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep
_GRADARG_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) \
    + os.sep
_MODES = torch.autograd.grad_mode
# the grad-mode switches torch makes in Python: (code object, what it does)
_SWITCHES = {
    _MODES.no_grad.__enter__.__code__: "no_grad",
    _MODES.enable_grad.__enter__.__code__: "enable_grad",
    _MODES.set_grad_enabled.__init__.__code__: "set_grad_enabled",
    _MODES.inference_mode.__enter__.__code__: "inference_mode",
}
_EXITS = {
    _MODES.no_grad.__exit__.__code__,
    _MODES.enable_grad.__exit__.__code__,
    _MODES.set_grad_enabled.__exit__.__code__,
    _MODES.inference_mode.__exit__.__code__,
}
_DECORATED = "decorate_context"  # torch.utils._contextlib's wrapper of a decorated function
_LEAVING = {"item", "tolist", "numpy", "__float__", "__int__", "__bool__", "__index__"}


@dataclass(frozen=True)
class Where:
    """A line of the caller's code: file, line number, function, the line's text."""

    file: str
    line: int
    function: str
    text: str

    def __str__(self) -> str:
        code = f" `{self.text}`" if self.text else ""
        return f"{os.path.basename(self.file)}:{self.line} (in {self.function}){code}"


@dataclass(frozen=True)
class Switch:
    """A grad-mode switch: ``kind`` (``"no_grad"``, ``"set_grad_enabled(False)"``,
    ``"inference_mode"``, ...), whether it turns recording off, where, and the decorated
    function's name when it is a decorator."""

    kind: str
    off: bool
    where: Where | None
    decorates: str | None = None

    def __str__(self) -> str:
        if self.decorates is not None:
            return f"@torch.{self.kind}() on {self.decorates}"
        return f"torch.{self.kind}" + (f" at {self.where}" if self.where else "")


@dataclass(frozen=True)
class Cut:
    """A torch call that took a tensor on the path and returned one without a graph (or left
    torch): its name, where it was called, whether grad mode and inference mode were on, the
    switch that turned recording off (when one was seen), the result's dtype."""

    call: str
    where: Where | None
    grad_enabled: bool
    inference: bool
    switch: Switch | None
    dtype: torch.dtype | None
    leaves_torch: bool = False

    def reason(self) -> str:
        """Why the result has no graph, from what was seen at the call."""
        if self.inference:
            how = f", turned on by {self.switch}" if self.switch and self.switch.off else ""
            return f"ran in inference mode{how}"
        if not self.grad_enabled:
            if self.switch is not None and self.switch.off:
                return f"ran with grad mode off, turned off by {self.switch}"
            return "ran with grad mode off, already off when the function was called"
        if self.leaves_torch:
            return "returns Python numbers or NumPy values: a tensor made from them again has " \
                   "no history"
        if self.dtype is not None and not (self.dtype.is_floating_point or self.dtype.is_complex):
            return f"returns {str(self.dtype).removeprefix('torch.')} values, which carry no " \
                   f"gradient"
        if self.call in ("Tensor.detach", "Tensor.data", "Tensor.detach_"):
            return "returns a tensor cut from the graph"
        if self.call in ("torch.tensor", "torch.as_tensor", "torch.from_numpy"):
            return "copies values into a new tensor without history"
        return "returned a tensor without a graph from one with a graph"

    def __str__(self) -> str:
        at = f" at {self.where}" if self.where else ""
        return f"{self.call}{at} {self.reason()}"


@dataclass(frozen=True)
class Located:
    """What the recomputation saw: the cuts whose results reach the output (cuts of floating
    values first, then in the order they ran), the exits from torch on the path (each with the
    cut before it, if any), and whether the output has a graph from the tensor (then
    nothing is cut: both are empty)."""

    cuts: tuple[Cut, ...]
    exits: tuple[tuple[Cut, Cut | None], ...]
    reached: bool

    def sentence(self, xname: str, oname: str) -> str | None:
        """One clause naming the cut (or the exit) that explains it, or ``None``."""
        if self.cuts:
            first, more = self.cuts[0], len(self.cuts) - 1
            also = (f" ({more} more cut{'s' if more > 1 else ''} of the path also "
                    f"reach{'' if more > 1 else 'es'} {oname})") if more else ""
            return (f"running the function again located where the path from {xname} to "
                    f"{oname} was cut: {first}{also}")
        if self.exits:
            left, cut = self.exits[0]
            before = f"{cut}, and its values " if cut is not None else f"{xname}'s values "
            return (f"running the function again saw {before}leave torch at {left.call}"
                    + (f" at {left.where}" if left.where else "")
                    + f": a tensor made from them again has no history, and no tensor with "
                      f"a graph from {xname} reached {oname}")
        return None


def _call_name(func: Any) -> str:
    """``Tensor.mul``, ``Tensor.data``, ``torch.tensor``, ``F.linear`` ..."""
    name = str(getattr(func, "__qualname__", None) or getattr(func, "__name__", None) or func)
    module = getattr(func, "__module__", None) or ""
    if name.endswith(".__get__") and hasattr(getattr(func, "__self__", None), "__name__"):
        return f"Tensor.{func.__self__.__name__}"  # a property: Tensor.data, Tensor.T ...
    if name.startswith(("TensorBase.", "_TensorBase.")):
        return "Tensor." + name.split(".", 1)[1]
    if name.startswith("_VariableFunctionsClass."):
        return "torch." + name.split(".", 1)[1]
    if module.startswith("torch.nn.functional") or module.endswith("._nn"):  # F.linear ...
        return f"F.{name.rsplit('.', 1)[-1]}"
    if "." not in name and module.startswith("torch"):
        return f"torch.{name}"
    return name


def _tensors(value: Any) -> Iterator[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from _tensors(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _tensors(v)


def _outside(file: str) -> bool:
    return not file.startswith((_TORCH_DIR, _GRADARG_DIR, "<frozen"))


def _where(frame: Any) -> Where | None:
    """The innermost frame of the caller's code at or above ``frame`` (torch's and gradarg's
    own frames skipped)."""
    while frame is not None and not _outside(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None:
        return None
    file, line, code = frame.f_code.co_filename, frame.f_lineno, frame.f_code
    name = getattr(code, "co_qualname", code.co_name)  # Python 3.11+: M.forward, not forward
    return Where(file, line, name, linecache.getline(file, line).strip())


class Locator(TorchFunctionMode):
    """The two hooks of :func:`locate` (see the module's docstring) around one call."""

    def __init__(self, tensor: torch.Tensor, nodes: frozenset[str] = frozenset()) -> None:
        super().__init__()
        self.path: dict[int, torch.Tensor] = {id(tensor): tensor}  # kept: ids stay unique
        # node class name -> the calls on the path that made a node of it (for ``nodes``)
        self.nodes = nodes
        self.made: dict[str, list[tuple[str, Where | None]]] = {}
        self.marks: dict[int, tuple[torch.Tensor, frozenset[int]]] = {}  # cut-derived tensors
        self.cuts: list[Cut] = []
        # calls on the path whose results left torch, each with the cut before it (or None)
        self.exits: list[tuple[Cut, Cut | None]] = []
        self.switches: list[tuple[int, Switch]] = []  # active switches, (id(context), switch)

    # -- grad-mode switches (sys.setprofile) ------------------------------------------------
    def _profile(self, frame: Any, event: str, arg: Any) -> None:
        if event != "call":
            return
        code = frame.f_code
        kind = _SWITCHES.get(code)
        if kind is not None:
            self._switched(kind, frame)
        elif code in _EXITS:
            me = id(frame.f_locals.get("self"))
            self.switches = [s for s in self.switches if s[0] != me]

    def _switched(self, kind: str, frame: Any) -> None:
        ctx = frame.f_locals.get("self")
        off = kind in ("no_grad", "inference_mode")
        if kind == "set_grad_enabled":
            mode = bool(frame.f_locals.get("mode", True))
            kind, off = f"set_grad_enabled({mode})", not mode
        elif kind == "inference_mode":
            off = bool(getattr(ctx, "mode", True))
        caller = frame.f_back
        decorates = None
        if caller is not None and not _outside(caller.f_code.co_filename):
            if caller.f_code.co_name != _DECORATED:
                return  # torch's own switch (no_grad.__enter__ calls set_grad_enabled ...)
            func = caller.f_locals.get("func")
            decorates = getattr(func, "__qualname__", None)
        self.switches.append((id(ctx), Switch(kind, off, _where(caller), decorates)))

    # -- torch calls (TorchFunctionMode) ----------------------------------------------------
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        grad, inference = torch.is_grad_enabled(), torch.is_inference_mode_enabled()
        out = func(*args, **kwargs)
        ins = [*_tensors(args), *_tensors(kwargs)]
        on_path = any(self.path.get(id(t)) is t for t in ins)
        marks: frozenset[int] = frozenset()
        for t in ins:
            m = self.marks.get(id(t))
            if m is not None and m[0] is t:
                marks |= m[1]
        outs = list(_tensors(out))
        if on_path:
            name = _call_name(func)
            short = name.rsplit(".", 1)[-1]
            if not outs and short in _LEAVING:
                self.exits.append((self._cut(name, grad, inference, None, leaves=True), None))
            cut = [o for o in outs if o.grad_fn is None and self.path.get(id(o)) is not o]
            for o in outs:
                if o.grad_fn is not None:
                    self.path[id(o)] = o
                    kind = type(o.grad_fn).__name__
                    if kind in self.nodes and len(self.made.setdefault(kind, [])) < 8:
                        self.made[kind].append((name, _where(inspect.currentframe())))
            # a new tensor shaped like one on the path (zeros_like, new_ones ...) takes none
            # of its values: not a cut
            if cut and not (short.endswith("_like") or short.startswith("new_")):
                self.cuts.append(self._cut(name, grad, inference, cut[0].dtype))
                marks |= {len(self.cuts) - 1}
        elif marks and not outs and _call_name(func).rsplit(".", 1)[-1] in _LEAVING:
            # a cut's values leave torch (.detach().numpy()): the cut, then where they left
            self.exits.append((self._cut(_call_name(func), grad, inference, None, leaves=True),
                               self.cuts[min(marks)]))
        if marks:
            for o in outs:
                if self.path.get(id(o)) is not o:
                    self.marks[id(o)] = (o, marks)
        return out

    def _cut(self, name: str, grad: bool, inference: bool, dtype: torch.dtype | None,
             leaves: bool = False) -> Cut:
        switch = self.switches[-1][1] if self.switches else None
        return Cut(name, _where(inspect.currentframe()), grad, inference, switch, dtype, leaves)

    def run(self, fn: Callable[[], Any]) -> Any:
        """``fn()`` under both hooks; a profiler already running (``cProfile``) is left alone,
        and the switches are then not seen."""
        profiled = sys.getprofile() is None
        if profiled:
            sys.setprofile(self._profile)
        try:
            with self:
                return fn()
        finally:
            if profiled:
                sys.setprofile(None)


@dataclass(frozen=True)
class Site:
    """Where a call ran, read from the stack alone (no recomputation): the innermost line of
    the caller's code, and the grad-mode switch around it that the stack or the source shows
    (a ``torch.no_grad()`` / ``inference_mode()`` / ``set_grad_enabled(False)`` decorator on
    a function being run, or a ``with`` block of one of them around a line being run)."""

    where: Where | None
    switch: Switch | None

    def __str__(self) -> str:
        parts = [f"called at {self.where}"] if self.where else []
        if self.switch is not None:
            parts.append(f"inside {self.switch}")
        return ", ".join(parts)


_OFF_CALLS = {"no_grad": "no_grad", "inference_mode": "inference_mode",
              "set_grad_enabled": "set_grad_enabled(False)"}
_BLOCKS: dict[Any, list[tuple[int, int, str]]] = {}  # code object -> its grad-off with blocks


def _off_blocks(code: Any) -> list[tuple[int, int, str]]:
    """The ``with`` blocks of ``code``'s function that turn recording off, as (first line,
    last line, kind) in the file's numbering; read once per code object (``[]`` when its
    source cannot be read)."""
    got = _BLOCKS.get(code)
    if got is not None:
        return got
    found: list[tuple[int, int, str]] = []
    try:
        lines, first = inspect.getsourcelines(code)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError, IndentationError):
        tree, first = None, 0
    for node in ast.walk(tree) if tree is not None else ():
        if not isinstance(node, (ast.With, ast.AsyncWith)):
            continue
        for item in node.items:
            call = item.context_expr
            if not isinstance(call, ast.Call):
                continue
            f = call.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) \
                else ""
            off = name in ("no_grad", "inference_mode") and not (
                call.args and isinstance(call.args[0], ast.Constant) and not call.args[0].value)
            if name == "set_grad_enabled":
                off = bool(call.args) and isinstance(call.args[0], ast.Constant) \
                    and call.args[0].value is False
            if off:
                end = getattr(node, "end_lineno", None) or node.lineno
                found.append((first + node.lineno - 1, first + end - 1, _OFF_CALLS[name]))
    _BLOCKS[code] = found
    if len(_BLOCKS) > 4096:  # code objects of functions defined again and again
        _BLOCKS.pop(next(iter(_BLOCKS)))
    return found


def call_site(frame: Any) -> Site:
    """The :class:`Site` of the call running at ``frame``: the innermost frame of the
    caller's code above it, and the innermost switch that turns recording off found walking
    up the stack (a decorator's wrapper frame, or a ``with`` block of the caller's code around
    the line a frame is running)."""
    where, switch = None, None
    while frame is not None and switch is None:
        code = frame.f_code
        if _outside(code.co_filename):
            if where is None:
                where = _where(frame)
            for start, end, kind in _off_blocks(code):
                if start <= frame.f_lineno <= end:
                    line = linecache.getline(code.co_filename, start).strip()
                    name = getattr(code, "co_qualname", code.co_name)
                    switch = Switch(kind, True, Where(code.co_filename, start, name, line))
                    break
        elif code.co_name == _DECORATED:
            factory = frame.f_locals.get("ctx_factory")
            ctx = getattr(factory, "__self__", factory)
            kind = None
            if isinstance(ctx, _MODES.no_grad) or ctx is _MODES.no_grad:
                kind = "no_grad"
            elif isinstance(ctx, _MODES.inference_mode) and getattr(ctx, "mode", True):
                kind = "inference_mode"
            elif isinstance(ctx, _MODES.set_grad_enabled) and not getattr(ctx, "mode", True):
                kind = "set_grad_enabled(False)"
            if kind is not None:
                func = frame.f_locals.get("func")
                switch = Switch(kind, True, None, getattr(func, "__qualname__", None))
        frame = frame.f_back
    return Site(where, switch)


def made_at(fn: Callable[[], Any], tensor: torch.Tensor, node: str) -> list[str]:
    """Call ``fn`` once more (watched as by :func:`locate`) and say which calls on the path
    from ``tensor`` made an autograd node of class ``node`` (``"SqrtBackward0"``): up to three
    distinct ``"torch.sqrt at model.py:8 (in dist) `...`"``; ``[]`` when none was seen or the
    call raised.

    >>> w = torch.ones(3, requires_grad=True)
    >>> lines = made_at(lambda: torch.sqrt(w * 0).sum(), w, "SqrtBackward0")
    >>> lines[0].startswith("torch.sqrt")
    True
    """
    locator = Locator(tensor, frozenset({node}))
    try:
        with torch.random.fork_rng(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            locator.run(fn)
    except Exception:  # noqa: BLE001  (the diagnosis stands without it)
        return []
    out: list[str] = []
    for name, where in locator.made.get(node, []):
        text = f"{name} at {where}" if where is not None else name
        if text not in out:
            out.append(text)
    return out[:3]


def locate(fn: Callable[[], Any], tensor: torch.Tensor) -> Located | None:
    """Call ``fn`` once more (under ``torch.random.fork_rng``) and say where the path from
    ``tensor`` to its output was cut; ``None`` when the call raised or returned no tensor.

    >>> w = torch.ones(3, requires_grad=True)
    >>> def f():
    ...     with torch.no_grad():
    ...         h = w * 2
    ...     return h.sum()
    >>> found = locate(f, w)
    >>> found.cuts[0].call, found.cuts[0].grad_enabled, found.cuts[0].switch.kind
    ('Tensor.mul', False, 'no_grad')
    """
    locator = Locator(tensor)
    try:
        with torch.random.fork_rng(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the function's own warnings were seen already
            out = locator.run(fn)
    except Exception:  # noqa: BLE001  (the diagnosis stands without it)
        return None
    if not isinstance(out, torch.Tensor):
        return None
    if locator.path.get(id(out)) is out:  # the output has a graph from tensor: nothing cut
        return Located((), (), True)
    m = locator.marks.get(id(out))
    reach = [locator.cuts[i] for i in sorted(m[1])] if m is not None and m[0] is out else []
    # a cut of values first (a mask x > 0 or an argmax used as an index is a cut too, which
    # rarely is the one that matters): floating results before integer and boolean ones
    reach.sort(key=lambda c: not (c.dtype is None or c.dtype.is_floating_point
                                  or c.dtype.is_complex))
    return Located(tuple(reach), tuple(locator.exits), False)
