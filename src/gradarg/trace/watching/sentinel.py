"""Where a light step's forward first made NaN/Inf: the module calls noted lightly, read only
when the model's output is not finite.

On a light step (``watch(model, full_steps=k)``, :mod:`.detail`) the recorder's hooks are off
the modules inside the model.  Lighter ones go on instead: as each call returns, weak
references to its floating inputs and outputs, their autograd nodes and the call it ran in (a
forward pre-hook, on the modules with children only, notes when those start), and, for an
output narrower than float32, whether it was finite then (as :mod:`.callnotes` notes on a
full step).  No tensor is kept alive, no hook goes on a tensor or a node: a few attribute
reads per call.

When the model's call returns with an output that is not finite (found by :mod:`.graphnotes`
at the model's level) while its inputs are finite, these notes are read with the same
functions and the same rule as on a full step (:func:`.graphnotes.forward_nan`): the call
whose output holds NaN/Inf while each of its inputs is finite (checked: alive and finite, or
every call that produced it returned finite outputs), the innermost, first in forward order
(:func:`.graphnotes.first_nonfinite_call`); then the graph below its outputs (the values its
nodes saved) places the first non-finite value at the innermost call whose own operations
made it (:func:`.graphnotes.nonfinite_origin`, :func:`.graphnotes.call_of`), or in a value
without history it read (data, a constant): :func:`.graphnotes.placed`, as on a full step.  What the
notes cannot show (values freed, no non-finite saved value) is not located.  A module
without children that calls another module (not its child) is not seen running around it.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import Any, NamedTuple

import torch

from ..graph.nodes import children, is_leaf
from ..graph.values import tensors as _tensors
from . import graphnotes
from .forwardnotes import overflow
from .records import CallValues

__all__ = ["Located", "Sentinel"]

_WALK_LIMIT = 64  # autograd nodes visited per input to find the calls that produced it


def producers_of(owner: Mapping[Any, int], node: Any) -> list[int]:
    """The calls (``owner``: autograd node -> call index) whose outputs reach ``node`` through
    operations outside any call, within ``_WALK_LIMIT`` nodes (the full record's recorder
    reads its module inputs with it too)."""
    found, seen, todo = [], {node}, [node]
    while todo and len(seen) <= _WALK_LIMIT:
        n = todo.pop()
        at = owner.get(n)
        if at is not None:
            found.append(at)
            continue
        for child, _ in children(n):
            if child is not None and child not in seen and not is_leaf(child):
                seen.add(child)
                todo.append(child)
    return found
_WIDE = frozenset((torch.float32, torch.float64))  # floating, and not noted as narrow
_NARROW = frozenset(t for t in (torch.float16, torch.bfloat16, getattr(torch, "float8_e4m3fn", None),
                                getattr(torch, "float8_e5m2", None)) if t is not None)


class Located(NamedTuple):
    """The module call of a light step where the forward's first NaN/Inf comes from: its
    ``name``, class ``kind``, ``how`` (``"made"``: its own operations made it; ``"input"``:
    it read it from a value without history) and ``overflow`` (``(dtype, largest finite
    value)`` when it returned Inf in a float narrower than 32 bits, else ``None``); ``op``,
    ``singular``: the operation that made it, as :class:`.graphnotes.Made` gives them."""

    name: str
    kind: str
    how: str
    overflow: tuple[str, float] | None
    op: str = ""
    singular: str = ""
    held: str = ""  # an input's non-finite entries (how == "input")


def _floating(value: Any) -> list[torch.Tensor]:
    if type(value) is torch.Tensor:
        return [value] if value.is_floating_point() or value.is_complex() else []
    return [t for t in _tensors(value) if t.is_floating_point() or t.is_complex()]


class Sentinel:
    """The light notes of a light step's module calls (see the module's text).

    Parameters
    ----------
    watched : Watched
        The model's names and the step's progress (calls after a backward pass reached the
        model, recomputations under checkpointing, are not noted).
    detail : Detail
        Which steps are light; a new step (``detail.step``) drops the last one's notes.  The
        call located is put in ``detail.located`` (:class:`Located`).
    graph : GraphNotes
        Where the forward's first NaN/Inf was found at the model's level (``forward_nan``).
    """

    def __init__(self, watched: Any, detail: Any, graph: Any):
        self.watched, self._detail, self._graph = watched, detail, graph
        self._step = -1
        self._reset()

    def _reset(self) -> None:
        # per call, in forward order: [module, parent, input refs, output refs, input nodes,
        # output nodes] (a tuple for a module without children, noted once)
        self._calls: list[Any] = []
        self._stack: list[int] = []  # the calls running; the model's first
        self._narrow: dict[int, tuple[bool, torch.dtype, bool]] = {}
        self._read_once = False  # located once per step

    def hooks(self) -> tuple[Any, Any]:
        """The forward pre-hook and hook for the modules inside the model (bound methods, held
        by whoever registers them, not by the sentinel, so no reference cycle; registered
        through :func:`.patches.module_hook`, which runs them eagerly while torch.compile
        traces)."""
        return self._pre, self._post

    def root_pre(self, module: Any, args: Any) -> None:
        """The model's forward pre-hook (after the recorder's: the step has begun)."""
        if self._detail.step != self._step:
            self._step = self._detail.step
            self._reset()
        self._pre(module, args)

    def root_post(self, module: Any, args: Any, output: Any) -> None:
        """The model's forward hook (after the recorder's: ``graph.forward_nan`` is read)."""
        stack = self._stack
        while stack and self._calls[stack[-1]][0] is not module:
            stack.pop()  # calls whose forward raised (a checkpoint's early stop) never returned
        if not stack:
            return
        root = stack[0]
        self._post(module, args, output)
        if (self._stack or self._read_once or self._detail.full
                or self._graph.forward_nan is None):  # the model's output is finite
            return
        self._read_once = True
        try:
            self._detail.located = self._locate(root)
        except Exception:  # noqa: BLE001 (never break the user's forward)
            self._detail.located = None

    def _pre(self, module: Any, args: Any) -> None:
        """A call of the model or of a module with children starts (a module without
        children is noted when it returns: no call can run inside it)."""
        stack = self._stack
        if (self._detail.full or self.watched.backward_seen
                or (not stack and module is not self.watched.model)):
            return
        calls = self._calls
        parent = stack[-1] if stack else None
        stack.append(len(calls))
        ins = _floating(args)
        calls.append([module, parent, [weakref.ref(t) for t in ins], [],
                      [t.grad_fn for t in ins], []])

    def _post(self, module: Any, args: Any, output: Any) -> None:
        stack = self._stack
        if not stack:
            return
        calls = self._calls
        if calls[stack[-1]][0] is module:  # a call noted when it started returns
            index = stack.pop()
            call = calls[index]
        elif self._detail.full or self.watched.backward_seen:
            return
        else:  # a module without children: noted now, inside the call running
            index = len(calls)
            t = args[0] if len(args) == 1 else None
            if (type(t) is torch.Tensor and type(output) is torch.Tensor  # the common case
                    and t.dtype in _WIDE and output.dtype in _WIDE):
                # an input edited in place by the call (its output) has a new node: not known
                calls.append((module, stack[-1], (weakref.ref(t),), (weakref.ref(output),),
                              (None if t is output else t.grad_fn,), (output.grad_fn,)))
                return
            if type(t) is torch.Tensor and (t.is_floating_point() or t.is_complex()):
                ins = [t]
            else:
                ins = _floating(args)
            # an input edited in place by the call (its output) has a new node: not known
            call = [module, stack[-1], [weakref.ref(t) for t in ins], [],
                    [None if t is output else t.grad_fn for t in ins], []]
            calls.append(call)
        if type(output) is torch.Tensor:
            outs = [output] if output.is_floating_point() or output.is_complex() else []
        else:
            outs = _floating(output)
        call[3] = [weakref.ref(t) for t in outs]
        call[5] = [t.grad_fn for t in outs]
        for t in outs:  # as callnotes notes it on a full step: read now, may be freed later
            if t.dtype in _NARROW:
                d = t.detach()
                ok = bool(torch.isfinite(d.float().sum())) or bool(torch.isfinite(d).all())
                self._narrow[index] = (ok, t.dtype, not ok and bool(torch.isinf(d).any()))
                break

    def _locate(self, root: int) -> Located | None:
        """As :func:`.graphnotes.forward_nan` on a full step, from the light notes."""
        calls = self._calls
        if graphnotes.known_finite(calls[root][2]) is False:  # the data: said at that level
            return None
        parents = [c[1] for c in calls]
        depth = [0] * len(calls)
        for i, p in enumerate(parents):
            depth[i] = 0 if p is None else depth[p] + 1
        owner: dict[Any, int] = {}  # an output's node -> the innermost call that returned it
        for i in sorted(range(len(calls)), key=lambda i: -depth[i]):
            for n in calls[i][5]:
                if n is not None:
                    owner.setdefault(n, i)
        producers = [[p for n in c[4] if n is not None for p in producers_of(owner, n)]
                     for c in calls]
        values = {i: CallValues(c[2], c[3]) for i, c in enumerate(calls)}
        made = graphnotes.first_nonfinite_call(parents, values, root, producers, self._narrow)
        within = root if made is None else made
        nodes = [([n for n in c[5] if n is not None], [n for n in c[4] if n is not None])
                 for c in calls]
        found = graphnotes.placed(nodes, parents, within, made)
        if found is None or found.call == root:  # not inside the model: said at that level
            return None
        made, how = found.call, found.how
        module = calls[made][0]
        over = overflow(values[made])
        seen = self._narrow.get(made)
        if over is None and seen is not None and seen[2]:
            over = (str(seen[1]).removeprefix("torch."), float(torch.finfo(seen[1]).max))
        return Located(self.watched.names.get(module, "(model)"), type(module).__name__, how,
                       over if how == "made" else None, found.op, found.singular, found.held)
