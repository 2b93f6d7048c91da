"""The autograd API surface is on the site: every public name of ``torch.autograd``,
``torch.autograd.graph``, ``torch.autograd.forward_ad``, ``torch.autograd.functional`` and
``torch.func`` (their ``__all__``), and every ``register_*hook*`` method of ``torch.Tensor`` and
``torch.nn.Module``, appears in a live code cell of some page of ``docs/`` (the ``.md``
sources), so that a reader who meets the name finds it used and checked. ``EXCLUDED`` lists
the few that no page needs, each with the reason."""

from __future__ import annotations

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
