"""The package's rooms import one way only: toward the Jacobian core.

Every ``import`` in ``src/gradarg`` (top level or inside a function) is read with :mod:`ast`,
resolved to the room it reaches (``core``, ``show``, ``check``, ``trace``, ``sparse``, or the
shared ``_validate``) and checked against ``ALLOWED`` below, the same contract each
subpackage's ``__init__`` docstring states.  The last tests feed the checker a deliberate
back-import to show that it fails.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

# Read from the source tree, without importing gradarg: a back-import at module level would
# otherwise fail at collection as a circular ImportError instead of a readable list.
SRC = Path(__file__).resolve().parents[1] / "src" / "gradarg"

# room -> rooms it may import (besides itself)
ALLOWED: dict[str, set[str]] = {
    "_validate": set(),
    "core": {"_validate"},
    "show": {"core", "_validate"},
    "sparse": {"core", "_validate"},
    "check": {"core", "show", "_validate"},
    "trace": {"core", "show", "_validate"},
    "plot": {"show"},  # gradarg.plot: the documented address of gradarg.show.plot
}
ROOMS = set(ALLOWED)


def module_name(path: Path) -> str:
    parts = ("gradarg", *path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def room_of(module: str) -> str | None:
    """``gradarg.check.backward`` -> ``check``; ``gradarg`` itself -> ``None`` (the top)."""
    parts = module.split(".")
    if parts[0] != "gradarg" or len(parts) == 1:
        return None
    return parts[1]


def _type_checking_only(tree: ast.AST) -> set[int]:
    """``id`` of every node inside an ``if TYPE_CHECKING:`` block (never run)."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) in (
                "TYPE_CHECKING", "typing.TYPE_CHECKING"):
            skip.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return skip


def imported_modules(source: str, module: str, is_package: bool,
                     runtime_only: bool = False) -> list[tuple[int, str]]:
    """``(line, absolute module)`` for every import of a gradarg module in ``source``
    (``runtime_only``: not those under ``if TYPE_CHECKING:``, which never run)."""
    package = module if is_package else module.rpartition(".")[0]
    found = []
    tree = ast.parse(source)
    skip = _type_checking_only(tree) if runtime_only else set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.startswith("gradarg")]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("gradarg"):
                continue
            if node.module is None or target.count(".") < 1:
                # "from . import fd_error" / "from gradarg import x": the names are modules
                found += [(node.lineno, f"{target}.{a.name}") for a in node.names]
            else:
                found.append((node.lineno, target))
    return found


def violations(source: str, module: str, is_package: bool = False) -> list[str]:
    room = room_of(module)
    if room is None:  # gradarg/__init__.py gathers the public names from every room
        return []
    bad = []
    for line, target in imported_modules(source, module, is_package):
        other = room_of(target)
        if other is None:
            bad.append(f"{module}:{line} imports the top-level gradarg package")
        elif other != room and other not in ALLOWED.get(room, set()):
            bad.append(f"{module}:{line} imports {target} ({room} may not import {other})")
    return bad


def all_modules() -> list[tuple[Path, str]]:
    return [(p, module_name(p)) for p in sorted(SRC.rglob("*.py"))]


def test_every_module_lives_in_a_known_room():
    unknown = [m for _, m in all_modules() if m != "gradarg" and room_of(m) not in ROOMS]
    assert unknown == []


def test_imports_run_toward_the_core():
    bad = [
        v
        for path, module in all_modules()
        for v in violations(path.read_text(), module, path.name == "__init__.py")
    ]
    assert bad == []


def test_the_contract_has_no_cycle():
    # a room may reach itself only through itself: depth-first search over ALLOWED
    def reach(room: str, seen: frozenset[str]) -> None:
        for other in ALLOWED[room]:
            assert other not in seen, f"cycle through {other}"
            reach(other, seen | {other})

    for room in ALLOWED:
        reach(room, frozenset({room}))


def module_graph(sources: dict[str, tuple[str, bool]]) -> dict[str, set[str]]:
    """``module -> gradarg modules it imports`` when it runs (top level or inside a function;
    not under ``if TYPE_CHECKING:``, which only the type checker reads).

    ``sources`` maps a module name to ``(source, is_package)``.  A name imported from a package
    (``from . import jacobian``) that is not a module of its own counts as an import of the
    package; the implicit import of a module's parent packages is not counted.
    """
    graph: dict[str, set[str]] = {}
    for module, (source, is_package) in sources.items():
        targets = set()
        for _, target in imported_modules(source, module, is_package, runtime_only=True):
            while target not in sources and "." in target:
                target = target.rpartition(".")[0]
            if target in sources and target != module:
                targets.add(target)
        graph[module] = targets
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every set of modules that import each other, directly or through a chain (sorted)."""
    import networkx as nx

    g = nx.DiGraph([(a, b) for a, bs in graph.items() for b in bs])
    return sorted(sorted(c) for c in nx.strongly_connected_components(g) if len(c) > 1)


def test_no_file_level_import_cycle():
    sources = {m: (p.read_text(), p.name == "__init__.py") for p, m in all_modules()}
    assert import_cycles(module_graph(sources)) == []


# no module of the package is longer than this (issue 34): one small place per kind of knowledge
MAX_LINES = 500


def test_no_module_is_over_500_lines():
    lines = {m: len(p.read_text().splitlines()) for p, m in all_modules()}
    assert {m: n for m, n in lines.items() if n > MAX_LINES} == {}


def test_a_deliberate_file_cycle_is_caught():
    sources = {
        "gradarg.trace": ("from .a import f\n", True),
        "gradarg.trace.a": ("def f():\n    from .b import g\n", False),
        "gradarg.trace.b": ("from . import a\n", False),
        "gradarg.trace.c": ("from .a import f\nfrom . import g\n", False),
        # a cycle for the type checker only (never imported at run time) is not one
        "gradarg.trace.e": ("from .f import h\n", False),
        "gradarg.trace.f": (("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                             "    from .e import k\n"), False),
    }
    assert import_cycles(module_graph(sources)) == [["gradarg.trace.a", "gradarg.trace.b"]]


def test_every_subpackage_says_what_it_may_import():
    for room in ROOMS - {"_validate", "plot"}:
        doc = ast.get_docstring(ast.parse((SRC / room / "__init__.py").read_text())) or ""
        assert "May import" in doc, room


@pytest.mark.parametrize(
    ("source", "module", "is_package"),
    [
        ("from ..check.compare import compare_vjp\n", "gradarg.core.dense", False),
        ("def f():\n    from ..sparse import SparseJacobian\n", "gradarg.core.dense", False),
        ("import gradarg.trace.tracer\n", "gradarg.show.render", False),
        ("from ..trace import why_no_grad\n", "gradarg.check", True),
        ("from .. import jacobian\n", "gradarg.sparse.pattern", False),
    ],
)
def test_a_deliberate_back_import_is_caught(source, module, is_package):
    assert violations(source, module, is_package) != []


def test_allowed_imports_pass():
    assert violations("from ..core.dense import jacobian\n", "gradarg.check.backward") == []
    assert violations("from . import fd_error\n", "gradarg.check.backward") == []
    assert violations("from ..show.render import fmt\n", "gradarg.trace.drawing") == []


# Inside gradarg.trace: sub-packages, bottom to top.  Each may import those before it, never one
# after it (nor the gradarg.trace package itself, which gathers the public names from all).
# Type-only imports (under ``if TYPE_CHECKING:``) are not counted: they name a type a module
# reads, they never run (the drawings read a trace by its attributes, the tape draws itself).
TRACE_ORDER = ["graph", "draw", "tape", "why", "watching"]


def trace_part(module: str) -> str | None:
    """``gradarg.trace.why.causes`` -> ``why``; ``gradarg.trace`` -> ``""``; else ``None``."""
    parts = module.split(".")
    if parts[:2] != ["gradarg", "trace"]:
        return None
    return parts[2] if len(parts) > 2 else ""


def trace_violations(source: str, module: str, is_package: bool = False) -> list[str]:
    part = trace_part(module)
    if not part:  # outside trace, or gradarg.trace's own __init__
        return []
    bad = []
    for line, target in imported_modules(source, module, is_package, runtime_only=True):
        other = trace_part(target)
        if other is None or other == part:
            continue
        if other == "" or other not in TRACE_ORDER:
            bad.append(f"{module}:{line} imports {target} (not a sub-package of gradarg.trace)")
        elif TRACE_ORDER.index(other) > TRACE_ORDER.index(part):
            bad.append(f"{module}:{line} imports {target} ({part} may not import {other})")
    return bad


def test_trace_is_made_of_the_named_sub_packages():
    modules = [m for _, m in all_modules() if trace_part(m)]
    assert sorted({trace_part(m) for m in modules}) == sorted(TRACE_ORDER)
    # no flat module beside the sub-packages
    assert [p.name for p in (SRC / "trace").glob("*.py") if p.name != "__init__.py"] == []


def test_imports_inside_trace_run_one_way():
    bad = [
        v
        for path, module in all_modules()
        for v in trace_violations(path.read_text(), module, path.name == "__init__.py")
    ]
    assert bad == []


def test_every_trace_sub_package_says_what_it_is_for_and_may_import():
    for part in TRACE_ORDER:
        doc = ast.get_docstring(ast.parse((SRC / "trace" / part / "__init__.py").read_text()))
        assert doc and "What it is for" in doc and "May import" in doc, part


@pytest.mark.parametrize(
    ("source", "module", "is_package"),
    [
        ("from ..watching.events import Note\n", "gradarg.trace.why.causes", False),
        ("def f():\n    from ..why.diagnose import why_no_grad\n", "gradarg.trace.tape.traced",
         False),
        ("from ..tape import traced\n", "gradarg.trace.draw.player", False),
        ("import gradarg.trace.draw.drawing\n", "gradarg.trace.graph.nodes", False),
        ("from .. import watch\n", "gradarg.trace.why", True),
        ("from ...trace import why_no_grad\n", "gradarg.trace.watching.explain", False),
    ],
)
def test_a_deliberate_back_import_inside_trace_is_caught(source, module, is_package):
    assert trace_violations(source, module, is_package) != []


def test_forward_imports_inside_trace_pass():
    assert trace_violations("from ..graph.nodes import children\n",
                            "gradarg.trace.why.causes") == []
    assert trace_violations("from ..why import rules\n", "gradarg.trace.watching.explain") == []
    assert trace_violations("from . import reach\n", "gradarg.trace.why.causes") == []
    assert trace_violations("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                            "    from ..tape.traced import BackwardTrace\n",
                            "gradarg.trace.draw.player") == []


PRIVATE_TORCH = re.compile(r"torch\._[A-Za-z]|\._backward_hooks\b|_current_autograd_node")


def private_torch_uses(source: str) -> list[str]:
    """Lines of ``source`` (doctest lines aside) that use torch's private state."""
    return [line.strip() for line in source.splitlines()
            if PRIVATE_TORCH.search(line) and not line.strip().startswith((">>>", "..."))]


def test_the_trace_room_uses_only_public_torch():
    # the watch reads the hooks around a parameter through public hooks only (issue 43):
    # no private dict of torch's is read or reordered, no private function called
    found = {str(path.relative_to(SRC)): private_torch_uses(path.read_text())
             for path in (SRC / "trace").rglob("*.py")}
    assert {k: v for k, v in found.items() if v} == {}


def test_a_private_torch_use_is_caught():
    assert private_torch_uses("hooks = t._backward_hooks\n")
    assert private_torch_uses("node = torch._C._current_autograd_node()\n")
    assert not private_torch_uses("    >>> w._backward_hooks  # a doctest\n")
