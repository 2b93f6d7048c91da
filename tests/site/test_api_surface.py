"""The autograd API surface is on the site: every public name of ``torch.autograd``,
``torch.autograd.graph``, ``torch.autograd.forward_ad``, ``torch.autograd.functional`` and
``torch.func`` (their ``__all__``), and every ``register_*hook*`` method of ``torch.Tensor`` and
``torch.nn.Module``, appears in a live code cell of some page of ``docs/`` (the ``.md``
sources), so that a reader who meets the name finds it used and checked. ``EXCLUDED`` lists
the few that no page needs, each with the reason.

The options too: every parameter with a default value (read with ``inspect.signature``) of the
derivative functions of ``torch.func``, of ``torch.autograd.grad`` / ``backward``,
``Tensor.backward`` and the six ``torch.autograd.functional`` functions is passed by name
(``name=``) in a call to that very function in a code cell (the callee resolved through the
page's imports), except ``EXCLUDED_OPTIONS``, each with the reason."""

from __future__ import annotations

import ast
import inspect
import operator
import re
from pathlib import Path

import pytest
import torch
import torch.autograd.forward_ad
import torch.autograd.functional
import torch.autograd.graph
import torch.func

DOCS = Path(__file__).resolve().parents[2] / "docs"
_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```\s*$", re.MULTILINE | re.DOTALL)
# import statements (a parenthesised list included): a name imported but never used is not shown
_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+\S+[ \t]+)?import[ \t]+(?:\([^)]*\)|[^\n]*)",
                     re.MULTILINE)

MODULES = {
    "torch.autograd": torch.autograd,
    "torch.autograd.graph": torch.autograd.graph,
    "torch.autograd.forward_ad": torch.autograd.forward_ad,
    "torch.autograd.functional": torch.autograd.functional,
    "torch.func": torch.func,
}

# qualified name -> why no page uses it
EXCLUDED = {
    "torch.autograd.NestedIOFunction": (
        "legacy Function with instance methods; replaced by torch.autograd.Function "
        "with static forward/setup_context/backward, which the pages teach"),
    "torch.autograd.set_multithreading_enabled": (
        "only changes which thread runs backward when accelerator devices are in use; "
        "the site runs on the CPU, where it changes nothing that a cell could show"),
    "torch.autograd.enforce_grad_layout_policy": (
        "a memory-layout switch (may .grad be stolen with strides unlike the parameter's); "
        "the gradient values are the same either way"),
    "torch.autograd.graph.region_activation_memory_budget": (
        "a prototype setting of torch.compile's partitioner (what to recompute); "
        "gradients are unchanged"),
    "torch.autograd.graph.set_warn_on_accumulate_grad_stream_mismatch": "CUDA streams only",
    "torch.autograd.graph.set_override_stale_capture_stream": "CUDA streams only",
    "torch.autograd.forward_ad.enter_dual_level": (
        "what `with dual_level():` calls on entry; the pages use the context manager"),
    "torch.autograd.forward_ad.exit_dual_level": (
        "what `with dual_level():` calls on exit; the pages use the context manager"),
    "torch.func.rearrange": "einops-style reshaping of batched tensors, not a derivative",
    "Module.register_state_dict_pre_hook": "state_dict hooks: checkpoint files, not autograd",
    "Module.register_state_dict_post_hook": "state_dict hooks: checkpoint files, not autograd",
    "Module.register_load_state_dict_pre_hook": (
        "state_dict hooks: checkpoint files, not autograd"),
    "Module.register_load_state_dict_post_hook": (
        "state_dict hooks: checkpoint files, not autograd"),
}


def public_names() -> list[str]:
    """Qualified names: ``module.name`` for each ``__all__`` entry, ``Tensor.m`` / ``Module.m``
    for each hook-registering method."""
    names = [f"{m}.{n}" for m, mod in MODULES.items() for n in mod.__all__]
    for cls in (torch.Tensor, torch.nn.Module):
        names += [f"{cls.__name__}.{n}" for n in dir(cls)
                  if n.startswith("register_") and "hook" in n]
    return names


def code_cells() -> str:
    """The source of every code cell of every page under docs/, import statements left out."""
    return "\n".join(_IMPORT.sub("", m.group(1)) for page in sorted(DOCS.rglob("*.md"))
                     if "_build" not in page.parts
                     for m in _CELL.finditer(page.read_text(encoding="utf-8")))


NAMES = public_names()
CODE = code_cells()


def test_the_surface_is_the_one_measured():
    """A torch upgrade that adds or drops names shows up here, not as silent gaps."""
    assert len(NAMES) >= 60
    assert set(EXCLUDED) <= set(NAMES), sorted(set(EXCLUDED) - set(NAMES))
    assert all(len(reason) > 10 for reason in EXCLUDED.values())


@pytest.mark.parametrize("qualified", [n for n in NAMES if n not in EXCLUDED])
def test_name_is_used_in_a_code_cell(qualified):
    name = qualified.rsplit(".", 1)[1]
    assert re.search(rf"(?<!\w){re.escape(name)}(?!\w)", CODE), (
        f"{qualified} appears in no code cell under docs/: write an entry that uses it, "
        "or add it to EXCLUDED with the reason")


# ---------------------------------------------------------------------------------------------
# The options: every optional parameter of the derivative functions is shown in a call.

FUNCTIONS = {
    **{f"torch.func.{n}": getattr(torch.func, n)
       for n in ("grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "vmap",
                 "linearize", "functional_call")},
    "torch.autograd.grad": torch.autograd.grad,
    "torch.autograd.backward": torch.autograd.backward,
    "Tensor.backward": torch.Tensor.backward,
    **{f"torch.autograd.functional.{n}": getattr(torch.autograd.functional, n)
       for n in ("vjp", "jvp", "jacobian", "hessian", "vhp", "hvp")},
}

# "function.parameter" -> why no page passes it by name
EXCLUDED_OPTIONS = {
    "torch.autograd.grad.only_inputs": (
        "deprecated and ignored (its docstring: 'defaults to True'); passing it changes nothing"),
    "torch.autograd.backward.grad_variables": (
        "deprecated alias of grad_tensors (it warns 'Use grad_tensors instead'); the pages "
        "show grad_tensors"),
    "torch.func.jacrev._preallocate_and_copy": "private (leading underscore), undocumented",
}


# names torch also exports the same function under
SAME_FUNCTION = {"torch.vmap": "torch.func.vmap"}


def options() -> list[str]:
    """``function.parameter`` for each parameter with a default value (the options a caller
    may pass by name), read with ``inspect.signature``."""
    out = []
    for qualified, fn in FUNCTIONS.items():
        for p in inspect.signature(fn).parameters.values():
            if p.default is not p.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
                out.append(f"{qualified}.{p.name}")
    return out


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    return "?." + ".".join(reversed(parts)) if parts else None  # e.g. f(x).backward


def keyword_calls() -> set[str]:
    """``function.keyword`` for each call, in a code cell of a page under docs/, that passes a
    keyword argument, the callee resolved through the page's imports (cells of one page share
    one namespace, as in the notebook): ``from torch.func import jvp`` makes ``jvp(...)``
    ``torch.func.jvp``; a ``.backward(...)`` on anything but ``torch.autograd`` is
    ``Tensor.backward``."""
    found = set()
    for page in sorted(DOCS.rglob("*.md")):
        if "_build" in page.parts:
            continue
        alias: dict[str, str] = {}
        for m in _CELL.finditer(page.read_text(encoding="utf-8")):
            source = "\n".join(line for line in m.group(1).splitlines()
                               if not line.lstrip().startswith(("%", "!", ":")))
            try:
                tree = ast.parse(source)
            except SyntaxError:
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    for a in node.names:
                        if a.asname:
                            alias[a.asname] = a.name
                elif isinstance(node, ast.ImportFrom) and node.module:
                    for a in node.names:
                        alias[a.asname or a.name] = f"{node.module}.{a.name}"
            for node in ast.walk(tree):
                if not (isinstance(node, ast.Call) and node.keywords):
                    continue
                name = _dotted(node.func)
                if name is None:
                    continue
                head, _, rest = name.partition(".")
                name = alias.get(head, head) + (f".{rest}" if rest else "")
                name = SAME_FUNCTION.get(name, name)
                if name.endswith(".backward") and name != "torch.autograd.backward":
                    name = "Tensor.backward"
                found |= {f"{name}.{k.arg}" for k in node.keywords if k.arg}
    return found


OPTIONS = options()
CALLS = keyword_calls()


def test_the_options_are_the_ones_measured():
    assert len(OPTIONS) >= 50
    def get(qualified):
        return operator.attrgetter(qualified.removeprefix("torch."))(torch)
    assert all(get(alias) is get(name) for alias, name in SAME_FUNCTION.items())
    assert set(EXCLUDED_OPTIONS) <= set(OPTIONS), sorted(set(EXCLUDED_OPTIONS) - set(OPTIONS))


@pytest.mark.parametrize("option", [o for o in OPTIONS if o not in EXCLUDED_OPTIONS])
def test_option_is_passed_by_name_in_a_code_cell(option):
    assert option in CALLS, (
        f"no code cell under docs/ calls {option.rsplit('.', 1)[0]}(..., "
        f"{option.rsplit('.', 1)[1]}=...): write or widen an entry that shows it, or add it "
        "to EXCLUDED_OPTIONS with the reason")
