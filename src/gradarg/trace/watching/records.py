"""The records a watched training step leaves: one per module call, one per parameter.

:func:`assemble` turns the raw notes of :class:`~gradarg.trace.watching.watch.GradWatch`'s hooks into
:class:`ModuleRecord` and :class:`ParamRecord` objects; :class:`RawCall` is one such note.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import torch

from ..graph.values import combine, state
from .events import Note, PassEntry, chain

__all__ = ["CallInputs", "CallValues", "DeadUnits", "ModuleRecord", "OpenSum", "ParamRecord",
           "RawCall", "assemble", "full_name"]

ROOT_NAME = "(model)"


class RawCall(NamedTuple):
    """What the forward hooks noted about one module call (``outs`` set when it returns)."""

    module: torch.nn.Module
    parent: int | None
    ins: list[int]
    outs: list[int] | None
    producers: list[int]


class CallValues(NamedTuple):
    """Weak references to the floating tensors a module call took (``ins``) and returned
    (``outs``): the record keeps no tensor alive."""

    ins: list[Any]
    outs: list[Any]


class CallInputs(NamedTuple):
    """The inputs of a call with history: ``(node, output number)`` of each non-leaf
    (``keys``), and the leaf tensors (``leaves``)."""

    keys: set[tuple[Any, int]]
    leaves: list[torch.Tensor]


class DeadUnits(NamedTuple):
    """What a ReLU-like call's output showed: the largest value of each unit over the batch
    (``peak``), the number of units (``units``), their axis, in words (``axis``), and how many
    values each unit had over the batch (``rows``: examples times positions), its support."""

    peak: torch.Tensor
    units: int
    axis: str
    rows: int = 0


@dataclass(eq=False, slots=True)
class OpenSum:
    """What a call's edges into one input carried so far in a pass: their running sum
    (``total``, ``None`` before the first gradient) and how many edges arrived."""

    total: torch.Tensor | None = None
    arrived: int = 0


@dataclass
class ModuleRecord:
    """One call of one module during the watched step, and the gradient that went through it.

    Attributes
    ----------
    index : int
        Position in forward order (0 is the watched model itself).
    name : str
        Qualified name as in ``model.named_modules()`` (``"(model)"`` for the model).
    kind : str
        The module's class name, e.g. ``"Linear"``.
    parent : int or None
        ``index`` of the module call this one ran inside.
    depth : int
        Nesting depth (0 for the model).
    out_shape : tuple of int or None
        Shape of the first output tensor that requires grad.
    in_shape : tuple of int or None
        Shape of the first input tensor that requires grad.
    grad_out : float or None
        Norm of the gradient that arrived at the module's outputs (all of them together);
        ``None`` if none arrived. NaN or Inf if it held NaN or Inf.
    grad_in : float or None
        Norm of the gradient with respect to the module's inputs.  When another module call
        takes the same input tensor (a module called twice on one input, two heads on one
        body), it is what this call alone sent back (hooks on the autograd edges from the
        call's operations to that tensor, summed per pass); otherwise it is the input
        tensor's whole gradient, which for an input also used by a functional operation (the
        skip of ``x + attn(x)``) includes that use.  ``None`` if no input requires grad or
        nothing arrived.
    param_norm : float or None
        Norm of this step's gradients of the module's own parameters (not its children's).
    dead_units : tuple of int or None
        For ReLU-like modules: ``(dead, units)``, the units whose output was 0 for every
        example and position.  Units are channels (dimension 1) after a convolution, batch
        norm or pooling, else features (the last dimension: a ``Linear`` on ``(batch, sequence,
        features)`` input).
    unit_axis : str or None
        What the units were counted along: ``"features, the last dimension"`` or
        ``"channels, dimension 1"``.
    dead_support : int
        How many values each unit had in the batch (examples times positions): the support of
        ``dead_units``.
    producers : tuple of int
        ``index`` of the module calls whose outputs reached this call's inputs (through
        functional operations such as ``+`` too).
    backward_rank : int or None
        When the gradient reached the module's output in the backward pass (0 first).
    """

    index: int
    name: str
    kind: str
    parent: int | None
    depth: int
    out_shape: tuple[int, ...] | None = None
    in_shape: tuple[int, ...] | None = None
    grad_out: float | None = None
    grad_in: float | None = None
    param_norm: float | None = None
    dead_units: tuple[int, int] | None = None
    unit_axis: str | None = None
    dead_support: int = 0
    producers: tuple[int, ...] = ()
    backward_rank: int | None = None
    children: list[int] = field(default_factory=list)
    params: list[str] = field(default_factory=list)


@dataclass
class ParamRecord:
    """What one parameter received in the watched step.

    Attributes
    ----------
    name : str
        As in ``model.named_parameters()``.
    module : str
        The module that owns it.
    shape : tuple of int
    requires_grad : bool
    grad : float or None
        Norm of the gradient this step's backward pass computed for it, before it was added to
        ``.grad``; ``None`` if no gradient reached it.  Several passes in the step (no forward
        between them): the norm of their sum, read from ``.grad`` after the last one when
        ``.grad`` was empty before the first, else the square root of the sum of their squared
        norms.
    held_before : float or None
        Norm of what ``.grad`` already held when that gradient arrived (``None``: ``.grad``
        was None). Nonzero means ``.grad`` now holds a sum over several backward passes.
    passes : int
        The backward passes whose sum ``.grad`` held after the last one, counted by a hook
        after each accumulation, back to the latest that found ``.grad`` None or zero (the
        passes of earlier micro-batches included).
    events : tuple
        What was observed of its ``.grad`` during the block, in order (the latest 64), each a
        ``gradarg.trace.watching.events.Note``: each pass that accumulated into it, each optimizer step
        holding it, the end of the block; read by ``gradarg.trace.watching.events.accumulation`` (what
        the final ``.grad`` sums) and ``gradarg.trace.watching.events.after_backward`` (what happened
        to it between the last pass and the step).
    sparse : bool
        The gradient arrived as a sparse tensor (``nn.Embedding(sparse=True)``).
    module_ran : bool
        Whether the owning module was called in the forward pass.
    final_known : bool
        Whether the watch saw the end of the ``with`` block (or :meth:`GradWatch.remove`),
        where ``final`` is read.
    final : float or None
        Norm of ``.grad`` when the block ended (``None``: ``.grad`` was None then).  Differs
        from ``grad`` when the gradient was edited after backward: clipped, scaled, unscaled
        by a ``GradScaler``, or cleared.
    """

    name: str
    module: str
    shape: tuple[int, ...]
    requires_grad: bool
    grad: float | None = None
    held_before: float | None = None
    sparse: bool = False
    module_ran: bool = False
    final_known: bool = False
    final: float | None = None
    passes: int = 0
    events: tuple[Note, ...] = ()

    @property
    def state(self) -> str:
        """``"ok"``, ``"zero"``, ``"nonfinite"`` or ``"none"``."""
        return state(self.grad)




def assemble(raw: list[RawCall], arrivals: list[tuple[int, float]], shapes: list[tuple[int, ...]],
             names: dict[Any, str], dead: dict[int, DeadUnits],
             param_got: Sequence[PassEntry],
             owner: dict[Any, tuple[str, str]],
             final: dict[Any, float | None] | None = None,
             sent: dict[int, list[float]] | None = None,
             notes: dict[Any, list[Note]] | None = None,
             ) -> tuple[list[ModuleRecord], dict[str, ParamRecord], int]:
    """The module calls, the parameters and the number of backward passes, from the hooks'
    notes: ``arrivals`` (slot, norm) in backward order, ``param_got`` (a
    :class:`.events.PassEntry` per gradient that reached a parameter); ``sent`` (call -> norm per pass) what a call sent back to its
    inputs, where its edges were found; ``notes`` the events of each parameter's ``.grad``."""
    by_slot: dict[int, list[float]] = {}
    rank: dict[int, int] = {}
    for r, (slot, value) in enumerate(arrivals):
        by_slot.setdefault(slot, []).append(value)
        rank.setdefault(slot, r)
    passes = max((len(v) for v in by_slot.values()), default=0)
    slot_norm = {s: combine(v) for s, v in by_slot.items()}
    calls: list[ModuleRecord] = []
    for index, (module, parent, ins, outs, producers) in enumerate(raw):
        outs = outs or []
        depth = 0 if parent is None else calls[parent].depth + 1
        ranks = [rank[s] for s in outs if s in rank]
        rec = ModuleRecord(
            index=index, name=names.get(module, type(module).__name__),
            kind=type(module).__name__, parent=parent, depth=depth,
            out_shape=shapes[outs[0]] if outs and shapes else None,
            in_shape=shapes[ins[0]] if ins and shapes else None,
            grad_out=combine([n for s in outs if (n := slot_norm.get(s)) is not None]),
            grad_in=(combine(sent[index]) if sent and index in sent else
                     combine([n for s in ins if (n := slot_norm.get(s)) is not None])),
            producers=tuple(dict.fromkeys(p for p in producers if p != index)),
            backward_rank=min(ranks) if ranks else None)
        if index in dead:
            d = dead[index]
            rec.dead_units = (int((d.peak == 0).sum()), d.units)
            rec.unit_axis = d.axis
            rec.dead_support = d.rows
        if parent is not None:
            calls[parent].children.append(index)
        calls.append(rec)
    grads: dict[str, list[float]] = {}
    held: dict[str, float | None] = {}
    sparse: dict[str, bool] = {}
    last_after: dict[str, float | None] = {}
    for e in param_got:
        name = owner[e.param][0]
        grads.setdefault(name, []).append(e.grad)
        held.setdefault(name, e.held)
        last_after[name] = e.after
        sparse[name] = sparse.get(name, False) or e.sparse
    ran_names = {c.name for c in calls}
    first_call: dict[str, int] = {}
    for rec in calls:
        first_call.setdefault(rec.name, rec.index)
    params: dict[str, ParamRecord] = {}
    own: dict[int, list[float]] = {}
    for p, (name, mname) in owner.items():
        g = grads.get(name)
        total = None if g is None else combine(g)
        if g is not None and len(g) > 1 and not held.get(name):
            total = last_after.get(name) or total  # the norm of the sum, read from .grad
        events = tuple((notes or {}).get(p, ()))
        params[name] = ParamRecord(
            name=name, module=mname, shape=tuple(p.shape), requires_grad=p.requires_grad,
            grad=total, held_before=held.get(name), sparse=sparse.get(name, False),
            module_ran=mname in ran_names, final_known=final is not None,
            final=None if final is None else final.get(p),
            passes=len(chain(events)), events=events)
        if mname in first_call:
            calls[first_call[mname]].params.append(name)
            if total is not None:
                own.setdefault(first_call[mname], []).append(total)
    for rec in calls:
        rec.param_norm = combine(own.get(rec.index, []))
    return calls, params, passes


def full_name(names: list[str], name: str) -> str:
    """The one of ``names`` (the model's parameter names) that ``name`` gives: itself, or the
    one name that ends with ``"." + name`` (a name inside a submodule).

    Raises
    ------
    KeyError
        No name of ``names`` is or ends with it, or several end with it (listed).
    """
    if name in names:
        return name
    ends = [n for n in names if n.endswith("." + name)]
    if len(ends) == 1:
        return ends[0]
    if ends:
        raise KeyError(f"{name!r} names a parameter in {len(ends)} submodules of the watched "
                       f"model: {', '.join(ends[:8])}; give the full name")
    raise KeyError(f"no parameter named {name!r} in the watched model; known: "
                   f"{', '.join(names[:8])}...")
