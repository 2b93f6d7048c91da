"""One module object held at several places of the model and called more than once on the same
input in a step: ``nn.ModuleList([Head()] * 3)`` repeats one reference, so the three "heads"
are one module, share every parameter and return the same output for the same input (Medusa's
heads cannot predict different offsets; an ensemble's members agree by construction).

A module held at several places and called on different inputs (ALBERT's one layer applied at
every depth) shares its weights on purpose: not named.  Seen here, when the record is read:
``model.named_modules(remove_duplicate=False)`` gives a module object with parameters under
several names (the outermost such module is named), and the recorder's calls of the last step
show it called at least twice with the very same input tensors (the same weak reference
objects to each call's inputs, which ``weakref.ref`` shares while the tensor lives; outputs
compared where they are still held).

Imports :mod:`.finding` only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from .finding import Finding, Options, shown

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = ["shared_module_calls"]


def _places(model: torch.nn.Module) -> list[tuple[torch.nn.Module, list[str]]]:
    """Module objects with parameters held under several names, outermost first."""
    found: dict[int, tuple[torch.nn.Module, list[str]]] = {}
    for name, m in model.named_modules(remove_duplicate=False):
        if name:
            found.setdefault(id(m), (m, []))[1].append(name)
    shared = [(m, names) for m, names in found.values()
              if len(names) > 1 and next(m.parameters(), None) is not None]
    outer: list[tuple[torch.nn.Module, list[str]]] = []
    for m, names in sorted(shared, key=lambda x: min(n.count(".") for n in x[1])):
        if not any(n.startswith(f"{o}.") for _, os in outer for o in os for n in names):
            outer.append((m, names))
    return outer


def _same_input(w: GradWatch, module: torch.nn.Module) -> tuple[int, bool | None]:
    """How many calls of ``module`` in the recorded step took the very same input tensors
    (the largest such group), and whether their outputs are equal (``None``: not held)."""
    values = w.calls.values
    groups: dict[tuple[int, ...], list[int]] = {}
    for i, call in enumerate(w.calls.raw):
        v = values.get(i)
        if call.module is not module or v is None or not v.ins:
            continue
        # one weak reference object per referent (``weakref.ref`` returns the existing one
        # while the tensor lives): the same reference is the same input tensor, even freed
        groups.setdefault(tuple(id(r) for r in v.ins), []).append(i)
    same = max(groups.values(), key=len, default=[])
    if len(same) < 2:
        return len(same), None
    outs = [[t for r in values[i].outs if (t := r()) is not None] for i in same]
    if any(not o or len(o) != len(values[i].outs) for o, i in zip(outs, same, strict=True)):
        return len(same), None
    with torch.no_grad():
        equal = all(len(o) == len(outs[0]) and all(
            a.shape == b.shape and torch.equal(a, b) for a, b in zip(o, outs[0], strict=True))
            for o in outs[1:])
    return len(same), equal


def shared_module_calls(w: GradWatch, o: Options) -> Finding:
    """A module object held at several places and called more than once on the same input
    (a problem)."""
    del o
    for module, names in _places(w.model):
        k, equal = _same_input(w, module)
        if k < 2 or equal is False:  # different inputs, or random (dropout): not this
            continue
        outputs = ("returned identical outputs (checked)" if equal else
                   "return the same outputs unless the module draws random numbers")
        return Finding("shared modules", True, (
            f"module '{names[0]}' is the same module object as {shown(names[1:], 4)}: one "
            f"instance held at {len(names)} places (nn.ModuleList([m] * {len(names)}) or "
            f"[m] * {len(names)} repeats one reference, it does not build {len(names)} "
            f"modules; observed: model.named_modules(remove_duplicate=False)), and the "
            f"forward called it {k} times on the same input tensor, so those calls {outputs}: "
            f"they share every parameter, and its gradient is the sum of all their losses' "
            f"gradients; build one module per place (nn.ModuleList([Head() for _ in "
            f"range({len(names)})]), or copy.deepcopy) if they are meant to differ"))
    return Finding("shared modules", True)
