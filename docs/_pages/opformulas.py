"""The backward formula of every autograd node, as torch states it: the formulas page's tables.

Every built-in ``grad_fn`` class named like ``SinBackward0`` or ``MulBackward0`` (not a custom
``autograd.Function``'s ``FooBackward``, nor the few written by hand in C++) is generated from one
entry of ``derivatives.yaml`` (PyTorch's ``tools/autograd/derivatives.yaml``, shipped with the
wheel as ``torchgen/packaged/autograd/derivatives.yaml``): for each differentiable input of the
operator, the expression that maps the upstream gradient ``grad`` to that input's gradient.
The entries are read with torchgen's own loader (``load_derivatives``, the code that generates
the nodes when torch is built), so that the node names are the ones torch gives them.

Two live checks:

- :func:`live_nodes`: the nodes in the graphs of up to :data:`SAMPLES` samples of each
  operator of PyTorch's OpInfo database (the operators page's), whose names must be among
  those read here (or be one of the few nodes written by hand in C++), each checked with
  ``gradcheck`` against finite differences on a call whose graph holds it;
- :func:`evaluate`: the formulas that are plain tensor expressions, evaluated in Python as
  written, against ``torch.autograd.grad`` on random float64 inputs.

Page plumbing, not part of ``gradarg``; imports torch, torchgen and the operators page's
``opsupport``.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import opsupport
import torch

SAMPLES = 8  # samples of each operator whose graphs are walked (as the jacrev column's)


@dataclass(frozen=True)
class Node:
    """One generated node: its name, the operator's schema, and ``(inputs, formula)`` pairs
    (one formula may give several inputs' gradients at once, as a tuple)."""

    name: str
    operator: str
    schema: str
    formulas: tuple[tuple[tuple[str, ...], str], ...]
    arguments: tuple[tuple[str, str], ...]  # (name, type) of each argument, out= ones left out
    function: str | None  # torch.<function> that calls it: no in-place, no out= overload

    @property
    def not_implemented(self) -> bool:
        return all(f.startswith("not_implemented(") for _, f in self.formulas)


def yaml_path() -> Path:
    import torchgen

    return Path(torchgen.__file__).parent / "packaged" / "autograd" / "derivatives.yaml"


@functools.cache
def _infos() -> dict:
    from torchgen.packaged.autograd.load_derivatives import load_derivatives

    base = yaml_path().parents[1]
    native = base / "ATen" / "native"
    infos, _ = load_derivatives(str(yaml_path()), str(native / "native_functions.yaml"),
                                str(native / "tags.yaml"))
    return infos


def nodes() -> list[Node]:
    """Every node generated for the default dispatch key, sorted by name (the entries for
    nested tensors and CUDA only are left out: :func:`other_dispatch` counts them)."""
    out = []
    for per_key in _infos().values():
        info = per_key.get("Default")
        if info is None or not info.op:  # an entry with no differentiable input
            continue
        schema = info.func.func
        plain = not schema.name.name.inplace and not schema.arguments.out
        out.append(Node(info.op, str(schema.name), str(schema),
                        tuple((d.var_names, d.formula) for d in info.derivatives),
                        tuple((a.name, str(a.type)) for a in schema.arguments.flat_all),
                        schema.name.name.base if plain else None))
    return sorted(out, key=lambda n: n.name.lower())


def other_dispatch() -> int:
    """How many formulas are given for a dispatch key other than the default."""
    return sum(key != "Default" for per_key in _infos().values() for key in per_key)


CONSTANTS = {"M_PI": math.pi, "M_LN2": math.log(2), "M_LN10": math.log(10)}  # C's math.h


class _Names(dict):
    """Names a formula uses: its own bindings, then torch's functions (``at::`` stripped)."""

    def __missing__(self, key):
        if key in CONSTANTS:
            return CONSTANTS[key]
        for space in (torch, torch.special, torch.ops.aten):
            if hasattr(space, key):
                return getattr(space, key)
        raise NameError(key)


@dataclass(frozen=True)
class Evaluated:
    node: str
    input: str
    formula: str
    equal: bool


def evaluate(all_nodes: Iterable[Node], seed: int = 0) -> tuple[list[Evaluated], int]:
    """Each formula of an operator that takes only tensors and is ``torch.<name>``, evaluated
    as written in Python (``at::`` dropped) with ``grad`` a random upstream gradient, each
    input a random float64 vector in (0.1, 0.9) and ``result`` the output, against
    ``torch.autograd.grad``. Returns the formulas that evaluated, and how many were tried
    but call a C++ helper or otherwise do not run as Python."""
    done, failed = [], 0
    for node in all_nodes:
        names = [name for name, _ in node.arguments]
        if not names or any(kind != "Tensor" for _, kind in node.arguments):
            continue
        fn = getattr(torch, node.function, None) if node.function else None
        if fn is None or node.not_implemented:
            continue
        torch.manual_seed(seed)
        xs = [(torch.rand(5, dtype=torch.float64) * 0.8 + 0.1).requires_grad_() for _ in names]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = fn(*xs)
        except Exception:  # noqa: BLE001, S112  (a sample this simple does not fit the op)
            continue
        if not isinstance(out, torch.Tensor) or not out.requires_grad:
            continue
        grad = torch.randn_like(out)
        for inputs, formula in node.formulas:
            for at, name in enumerate(inputs):
                if name not in names:
                    continue
                x = xs[names.index(name)]
                try:
                    (want,) = torch.autograd.grad(out, x, grad, retain_graph=True)
                except (NotImplementedError, RuntimeError):  # a missing derivative
                    continue
                env = _Names({n: t.detach() for n, t in zip(names, xs, strict=True)},
                             grad=grad, result=out.detach())
                try:
                    got = eval(formula.replace("at::", ""), {"__builtins__": {}}, env)
                    if isinstance(got, (tuple, list)):
                        got = got[at]
                    got = got.expand_as(want)
                except Exception:  # noqa: BLE001  (a C++ helper, a C++-only expression)
                    failed += 1
                    continue
                done.append(Evaluated(node.name, name, formula, bool(torch.allclose(got, want))))
    return done, failed


@dataclass(frozen=True)
class Seen:
    """Where a node was met: in the graph of ``operator``'s sample number ``sample`` (of those
    :func:`opsupport.sample_calls` takes), whose backward's ``gradcheck`` gave ``kind``
    (``checked``, ``mismatch``, ``raises``, ``unchecked``, ``none``; with ``detail``). The check
    covers the whole graph of that call, this node with the others in it."""

    operator: str
    sample: int
    kind: str
    detail: str = ""


def _names(outs) -> set[str]:
    stack = [t.grad_fn for t in opsupport.tensors(outs) if t.grad_fn is not None]
    visited, names = set(), set()
    while stack:
        node = stack.pop()
        if node is None or node in visited:
            continue
        visited.add(node)
        names.add(node.name())
        stack.extend(f for f, _ in node.next_functions)
    return names


def live_nodes(ops: list | None = None, count: int = SAMPLES) -> dict[str, Seen]:
    """``{node name: where it was first met and checked}``, over up to ``count`` float64
    samples of each operator of PyTorch's OpInfo database: each call's graph is walked from
    its outputs, and a call that meets a node not met before, or one whose earlier check did
    not pass, is checked with ``gradcheck`` (fast mode, against central differences); a
    passing check replaces a failing one."""
    seen: dict[str, Seen] = {}
    with warnings.catch_warnings(), opsupport.no_test_lookup():
        warnings.simplefilter("ignore")
        for op in ops if ops is not None else opsupport.load_op_db():
            try:
                calls = opsupport.sample_calls(op, count)
            except Exception:  # noqa: BLE001, S112  (the operators page says what raised)
                continue
            for k, (fn, args) in enumerate(calls):
                try:
                    names = _names(fn(*args))
                except Exception:  # noqa: BLE001, S112
                    continue
                todo = {n for n in names if n not in seen or seen[n].kind != "checked"}
                if not todo:
                    continue
                torch.manual_seed(0)  # gradcheck's random projections
                cell = opsupport.backward_cell(fn, args, op.gradcheck_nondet_tol)
                for n in todo:
                    if n not in seen or cell.kind == "checked":
                        seen[n] = Seen(opsupport.label(op), k, cell.kind, cell.detail)
    return seen


def _code(text: str) -> str:
    return "`" + text.replace("|", "\\|") + "`"


GROUPS = (("A", "B"), ("C", "C"), ("D", "F"), ("G", "L"), ("M", "M"), ("N", "R"),
          ("S", "S"), ("T", "Z"))


def group(name: str) -> tuple[str, str]:
    first = name.lstrip("_")[0].upper()
    return next(g for g in GROUPS if g[0] <= first <= g[1])


SYMBOL = {"checked": "✓", "mismatch": "≠", "raises": "✗", "unchecked": "runs", "none": "—",
          "no sample": ""}


def markdown(all_nodes: Iterable[Node], letters: tuple[str, str],
             seen: dict[str, Seen] | None = None) -> str:
    """The table of the nodes whose name starts with a letter of ``letters`` (first, last):
    a row per node, where it was met and checked (:func:`live_nodes`, when ``seen`` is given),
    its formulas one per line, each after the inputs it gives."""
    seen = seen or {}
    head = "| node | operator | checked on | gradient of each input (`grad`: the upstream gradient) |"
    lines = [head, "|---|---|---|---|"]
    for node in all_nodes:
        if group(node.name) != letters:
            continue
        met = seen.get(node.name)
        where = f"{SYMBOL[met.kind]} {_code(met.operator)}" if met else ""
        formulas = "<br>".join(f"{_code(', '.join(inputs))}: {_code(formula)}"
                               for inputs, formula in node.formulas)
        lines.append(f"| {_code(node.name)} | {_code(node.operator)} | {where} | {formulas} |")
    return "\n".join(lines)
