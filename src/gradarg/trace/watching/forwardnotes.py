"""What a watched step's forward values and leaves show, read once: whether the call that made
the first NaN/Inf overflowed a narrow float type (:func:`overflow`), and which tensors that
require grad fed the forward without being parameters of the model (:func:`unregistered`,
with where the model keeps them: :func:`held_where`).  :class:`.graphnotes.GraphNotes` calls
them at the moments the evidence is there.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import torch

from ..graph.nodes import children, leaf_tensor
from .records import CallValues

__all__ = ["Unregistered", "held_where", "overflow", "unregistered"]

_REACH_LIMIT = 20000  # graph nodes visited when walking the step's graph to its leaves


class Unregistered(NamedTuple):
    """A leaf tensor that requires grad and fed the forward, not a parameter of the model:
    where the model holds it (``where``, in words; ``""``: not found among its attributes),
    its ``shape``, whether an optimizer whose step ran holds it (``optimized``), whether
    it is a parameter of the model registered after the watch began (``later``), and whether
    it is a module's output made to require grad inside the forward (``made_in_forward``)."""

    where: str
    shape: tuple[int, ...]
    optimized: bool
    later: bool = False
    #: the output of a module call inside the forward, made to require grad there (a forward
    #: hook or ``requires_grad_()`` on it: transformers' ``enable_input_require_grads`` for
    #: gradient checkpointing does so): an activation, not a parameter; ``where`` names the call
    made_in_forward: bool = False


def held_where(model: torch.nn.Module, t: torch.Tensor) -> str:
    """Where ``model`` keeps ``t`` outside its registered parameters, in words: a plain
    tensor attribute, an entry of a Python list, tuple or dict attribute, or a parameter of a
    module kept in one; ``""`` when none of its modules' attributes holds it."""
    skip = {"_parameters", "_buffers", "_modules"}
    for name, q in model.named_parameters():
        if q is t:
            return (f"'{name}', a parameter of the model registered after the watch began (a "
                    f"module replaced or added: an optimizer built before does not hold it)")
    for mname, m in model.named_modules():
        at = f" of module '{mname or '(model)'}'"
        for attr, v in vars(m).items():
            if attr in skip or attr.startswith("__"):
                continue
            if v is t:
                return f"'{attr}'{at} (a plain tensor attribute: register it with nn.Parameter)"
            items = (list(v.items()) if isinstance(v, dict) else
                     list(enumerate(v)) if isinstance(v, (list, tuple)) else [])
            kind = type(v).__name__
            for k, x in items[:256]:
                if x is t:
                    fix = "nn.ParameterDict" if isinstance(v, dict) else "nn.ParameterList"
                    return f"'{attr}[{k!r}]'{at} (a Python {kind}: use {fix})"
                if isinstance(x, torch.nn.Module):
                    for pn, q in x.named_parameters():
                        if q is t:
                            fix = "nn.ModuleDict" if isinstance(v, dict) else "nn.ModuleList"
                            return (f"'{attr}[{k!r}].{pn}'{at} (a module kept in a Python "
                                    f"{kind}: use {fix})")
    return ""


def overflow(values: CallValues | None) -> tuple[str, float] | None:
    """``(dtype name, its largest finite value)`` when an output of the call holds Inf in a
    floating type of fewer than 32 bits (an overflow: float16 tops out at 65504); else
    ``None``."""
    if values is None:
        return None
    for ref in values.outs:
        t = ref()
        if (t is not None and t.is_floating_point() and t.element_size() < 4
                and bool(torch.isinf(t.detach()).any())):
            return str(t.dtype).removeprefix("torch."), float(torch.finfo(t.dtype).max)
    return None


def unregistered(rec: Any, outputs: Sequence[Any], watched: Any,
                 optimizers: Sequence[Any]) -> list[Unregistered]:
    """Leaf tensors that require grad, reached from the model's outputs in the graph of the
    step (``rec``, a :class:`~.recorder.Recorder`; ``outputs``: the nodes of the model's
    outputs), that are not parameters the watch began
    with (``watched.owner``) nor inputs of the model's outermost calls; ``optimizers``: the
    :class:`~.gradhooks.Holding` of each optimizer whose step ran."""
    inputs = {id(t) for i, r in enumerate(rec.raw) if r.parent is None
              and i in rec.values for ref in rec.values[i].ins if (t := ref()) is not None}
    # a module's output that is a leaf requiring grad was made so inside the forward
    made = {id(t): i for i, vals in rec.values.items() for ref in vals.outs
            if (t := ref()) is not None and t.grad_fn is None and t.requires_grad}
    found: list[Unregistered] = []
    todo = list(outputs)
    seen = set(todo)
    owner = watched.owner
    while todo and len(seen) < _REACH_LIMIT:
        n = todo.pop()
        t = leaf_tensor(n)
        if t is not None:
            if t not in owner and id(t) not in inputs and t.requires_grad:
                if id(t) in made:
                    mod = rec.raw[made[id(t)]].module
                    label = next((f"'{k}' ({type(m).__name__})" for k, m in
                                  watched.model.named_modules() if m is mod and k),
                                 type(mod).__name__)
                    found.append(Unregistered(f"the output of {label}", tuple(t.shape),
                                              False, made_in_forward=True))
                    continue
                stepped = any(t is f for h in optimizers for f in h.foreign)
                later = any(q is t for q in watched.model.parameters())
                found.append(Unregistered(held_where(watched.model, t), tuple(t.shape),
                                          stepped, later))
            continue
        for c, _ in children(n):
            if c is not None and c not in seen:
                seen.add(c)
                todo.append(c)
    return found
