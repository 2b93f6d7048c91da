"""How the source of a module's class reads one of its parameters, for a parameter that got no
gradient although its module ran: ``self.threshold`` read only in a comparison
(``x < self.threshold``: a boolean, no gradient), through ``.item()``, ``.detach()``,
``.data``, ``round`` / ``argmax`` / ``sign``, under ``torch.no_grad()``, or never read at all.

This is read from the class's source text (``inspect.getsource``, parsed with :mod:`ast`), not
from the run: a finding built on it says so, and says nothing when the source cannot be read
(a class defined in a notebook cell may have none) or when one read could carry a gradient.

Imports nothing of the trace room.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from dataclasses import dataclass
from typing import Any

__all__ = ["Read", "reads_of"]

# methods and functions whose result carries no gradient back to their tensor argument
_CUTS = frozenset({
    "item", "tolist", "numpy", "detach", "detach_", "int", "long", "bool", "float", "round",
    "argmax", "argmin", "sign", "floor", "ceil", "trunc", "nonzero", "eq", "ne", "lt", "le",
    "gt", "ge", "isclose", "allclose", "equal", "where_mask", "bucketize", "searchsorted",
})
_NO_GRAD = ("no_grad", "inference_mode")
# what reaches a parameter other than as self.<name>: a class using one is not read here
_INDIRECT = ("getattr(", "parameters(", "_parameters", "__dict__", "state_dict", "vars(self")


@dataclass(frozen=True)
class Read:
    """One read of ``self.<name>`` in the class's methods: the method, the line (of the source
    file), how it is used (``kind``: ``"comparison"``, ``"cut"``: passed to a call that
    returns no gradient, ``"no_grad"``: inside ``with torch.no_grad()``, ``"other"``) and the
    expression it sits in."""

    method: str
    line: int
    kind: str
    text: str


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ""


class _Reads(ast.NodeVisitor):
    def __init__(self, attr: str, method: str, source: str, first: int):
        self.attr, self.method, self.source, self.first = attr, method, source, first
        self.found: list[Read] = []
        self._stack: list[ast.AST] = []
        self._no_grad = 0

    def visit_With(self, node: ast.With) -> None:
        off = any(isinstance(i.context_expr, ast.Call) and _name(i.context_expr.func)
                  in _NO_GRAD for i in node.items)
        self._no_grad += off
        self.generic_visit(node)
        self._no_grad -= off

    def generic_visit(self, node: ast.AST) -> None:
        self._stack.append(node)
        super().generic_visit(node)
        self._stack.pop()

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if (node.attr == self.attr and isinstance(node.value, ast.Name)
                and node.value.id == "self" and isinstance(node.ctx, ast.Load)):
            self.found.append(self._read(node))
        self.generic_visit(node)

    def _read(self, node: ast.Attribute) -> Read:
        kind = "other"
        at_node: ast.AST = node
        parent = self._stack[-1] if self._stack else None
        if self._no_grad:
            kind = "no_grad"
        elif isinstance(parent, ast.Compare):
            kind, at_node = "comparison", parent
        elif (isinstance(parent, ast.Attribute) and parent.attr in ("data", *_CUTS)) or (
                isinstance(parent, ast.Call) and _name(parent.func) in _CUTS):
            kind, at_node = "cut", parent
        text = ast.get_source_segment(self.source, at_node) or f"self.{self.attr}"
        return Read(self.method, self.first + node.lineno - 1, kind, " ".join(text.split()))


def reads_of(module: Any, attr: str) -> list[Read] | None:
    """Every read of ``self.<attr>`` in the methods of ``type(module)`` (and its bases up to
    ``torch.nn.Module``, ``__init__`` left out), or ``None`` when a source cannot be read."""
    import torch

    found: list[Read] = []
    for cls in type(module).__mro__:
        if cls is torch.nn.Module:
            break
        if cls is object or cls.__module__.startswith("torch."):
            return None  # a torch layer's own forward (nn.Linear...): not read here
        try:
            lines, first = inspect.getsourcelines(cls)
        except (OSError, TypeError):
            return None
        source = textwrap.dedent("".join(lines))
        if any(k in source for k in _INDIRECT):
            return None  # parameters reached by name or in a loop: reads not all seen
        try:
            tree = ast.parse(source)
        except SyntaxError:
            return None
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                    and fn.name != "__init__":
                v = _Reads(attr, fn.name, source, first)
                v.visit(fn)
                found.extend(v.found)
    return found
