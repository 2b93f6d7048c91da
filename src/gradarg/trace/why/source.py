"""What the model's own code shows about a submodule none of whose parameters is in the graph:
whether any method of the module that holds it (other than ``__init__``) refers to it at all.

Read from the source (:func:`inspect.getsource`) of the holder's classes up to
:class:`torch.nn.Module`; a claim is made only when every such method's source can be read and
none reaches submodules by another route (``children()``, ``modules()``, ``getattr``,
``_modules``, ``named_children``, ``__dict__``, iteration over the holder, ``self`` handed to
a function: each could use it without naming it).  Imports only the standard library and torch.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Any

import torch

__all__ = ["never_referred"]

# ways a method can reach a submodule without writing self.<name>
_INDIRECT_ATTRS = {"children", "named_children", "modules", "named_modules", "_modules",
                   "__dict__", "apply", "named_parameters", "parameters", "__getattr__"}
_INDIRECT_CALLS = {"getattr", "hasattr", "vars", "setattr"}


def _uses(fn: Any, attr: str) -> tuple[bool, bool]:
    """``(names it, may reach it otherwise)`` for the method ``fn``, from its syntax tree:
    ``self.<attr>`` names it; ``self`` used other than as ``self.<something>`` (handed to a
    function, iterated, indexed), ``getattr``, ``children()`` and the like, or the string
    ``"<attr>"`` may reach it without naming it."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    func = tree.body[0]
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or not func.args.args:
        return False, True
    me = func.args.args[0].arg  # "self"
    owners = {id(n.value) for n in ast.walk(func) if isinstance(n, ast.Attribute)}
    names = other = False
    for n in ast.walk(func):
        if isinstance(n, ast.Attribute):
            if isinstance(n.value, ast.Name) and n.value.id == me and n.attr == attr:
                names = True
            if n.attr in _INDIRECT_ATTRS:
                other = True
        elif isinstance(n, ast.Name) and n.id == me and id(n) not in owners:
            other = True  # self handed on, iterated or indexed
        elif (isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
              and n.func.id in _INDIRECT_CALLS) or (isinstance(n, ast.Constant)
                                                     and n.value == attr):
            other = True  # getattr(self, name), the name as a string
    return names, other


def never_referred(holder: torch.nn.Module, attr: str) -> str | None:
    """Where ``holder``'s code shows that it never uses its submodule ``attr``, in words, or
    ``None`` when its code cannot show it.

    Parameters
    ----------
    holder : torch.nn.Module
        The module that holds the submodule (``model`` for ``model.extra``).
    attr : str
        The submodule's attribute name in ``holder`` (``"extra"``; a position in a
        ``ModuleList`` or ``Sequential`` is not a name its code writes: ``None``).

    Returns
    -------
    str or None
        ``"no method of Net other than __init__ refers to self.extra (read from
        models.py:12-30)"``, or ``None``.
    """
    if not attr.isidentifier():
        return None
    methods: list[tuple[str, Any]] = []
    for cls in type(holder).__mro__:
        if cls is torch.nn.Module or not issubclass(cls, torch.nn.Module):
            break
        methods += [(k, v) for k, v in vars(cls).items()
                    if k != "__init__" and inspect.isfunction(v)]
    if not any(k == "forward" for k, _ in methods):
        return None  # a container (Sequential, ModuleList): torch's forward, not the model's
    places = []
    for _, fn in methods:
        try:
            names, other = _uses(fn, attr)
            lines, first = inspect.getsourcelines(fn)
            file = inspect.getsourcefile(fn) or "?"
        except (OSError, TypeError, SyntaxError):
            return None  # source not available (an interactive session, a C extension)
        if names or other:
            return None
        places.append(f"{file.rsplit('/', 1)[-1]}:{first}-{first + len(lines) - 1}")
    name = type(holder).__name__
    shown = ", ".join(places[:3]) + (f" and {len(places) - 3} more" if len(places) > 3 else "")
    return (f"no method of {name} other than __init__ refers to self.{attr} (read from "
            f"{shown}): it is not called in forward")
