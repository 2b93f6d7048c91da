"""What the hooks of :class:`~gradarg.trace.watching.watch.GradWatch` read from the graph and from the
values at a few moments of a step, beyond the norms they note.

Each function answers one question at the moment its hook calls it, when the evidence is
there: which parameters are all zero, and whose gradient every path sends through a product
with one of them (at the first exactly-zero gradient of a backward pass: the parameters are
then as the forward used them); whether a backward pass stopped at a saved tensor modified in
place (when the step is read); which module call and operation first made a non-finite value
in the forward (when the model's output is not finite); whether a call ran inside reentrant
``torch.utils.checkpoint``.  Used by :mod:`.findings`, :mod:`.explain`."""

from __future__ import annotations

import cmath
import inspect
import os
import weakref
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import torch

from ..graph.nodes import Graph, children, in_place_edits, is_leaf, leaf_tensor, node_class, op_name
from ..graph.nodes import saved_value as _saved_value
from ..graph.operators import row
from ..graph.values import finite, nonfinite_entries
from ..why.gradients import Zeros, all_zero, bad_data, edited, forward_origin
from .forwardnotes import Unregistered, overflow, unregistered
from .operations import call_operations, operations_between
from .records import CallValues
from .recurrence import described

__all__ = [
    "GraphNotes", "Made", "Stop", "ZeroBlock", "call_of", "first_nonfinite_call", "forward_nan",
    "known_finite", "nonfinite_origin", "placed", "quick_finite", "reentrant_checkpoint",
    "refs", "roots", "stopped", "zero_blocks",
]


class Made(NamedTuple):
    """Where the forward's first NaN/Inf comes from: module call ``call``, ``how`` ``"made"``
    (by the call) or ``"input"`` (an input without history held it: ``held``, what it held,
    :func:`~gradarg.trace.graph.values.nonfinite_entries`); ``op``, ``singular``: the
    operation that made it and what its values show (``described`` in ``graph.operators``)."""

    call: int
    how: str
    op: str = ""
    singular: str = ""
    held: str = ""


class ZeroBlock(NamedTuple):
    """Why a parameter's gradient is exactly zero: every path to it passes through a product
    with an all-zero parameter.

    ``factors``: the all-zero parameters; ``adjacent``: the parameter is itself a factor of
    the product whose result the zero factor multiplies (``B @ (A @ x)``: LoRA's ``A`` behind
    ``B``), not a parameter deeper in a block the factor gates; ``node``: the product's node
    class."""

    factors: tuple[str, ...]
    adjacent: bool
    node: str


def _adjacent(graph: Graph, k: int) -> set[int]:
    """Leaves reached from node ``k`` through views and copies and at most one product."""
    out: set[int] = set()
    seen, todo = {(k, False)}, [(k, False)]
    while todo:
        key, used = todo.pop()
        node = graph.nodes[key]
        if is_leaf(node):
            out.add(key)
            continue
        op = row(op_name(node))
        if op.keeps_zero:
            nxt = used
        elif op.operands and not used:
            nxt = True
        else:
            continue
        for child, _ in children(node):
            if child is not None and (graph.index[child], nxt) not in seen:
                seen.add((graph.index[child], nxt))
                todo.append((graph.index[child], nxt))
    return out


def zero_blocks(roots: Sequence[Any], names: Mapping[torch.Tensor, str]) -> dict[str, ZeroBlock]:
    """Parameter name -> :class:`ZeroBlock` for every parameter that every path from ``roots``
    (the model's output nodes) reaches only through a product with an all-zero parameter.

    Read from the graph's structure and the parameters' values only (no saved tensor is
    read: under non-reentrant checkpointing that would recompute the forward), so call it
    while the parameters hold the values the forward used (during the backward pass)."""
    if not roots or not any(all_zero(p) for p in names):
        return {}
    graph = Graph(*roots)
    edges = Zeros({n: p for p, n in names.items()}, saved=False).edges(graph)
    if not edges:
        return {}
    start = [graph.index[r] for r in roots]
    kept = graph.reachable(set(edges), start=start)
    blocked = {k: names[t] for k, n in enumerate(graph.nodes)
               if k not in kept and (t := leaf_tensor(n)) is not None and t in names}
    # each blocked parameter is put down to the zero edges that alone cut it off (a zero on
    # one of its paths, such as the adapter of a later layer, is not its cause); to every
    # zero edge above it when only several together do
    alone = {e: blocked.keys() - graph.reachable({e}, start=start) for e in edges}
    cut_alone = set().union(*alone.values())
    out: dict[str, ZeroBlock] = {}
    for (k, slot), z in sorted(edges.items()):
        child = graph.index[children(graph.nodes[k])[slot][0]]
        near = _adjacent(graph, child)
        factors = tuple(names[t] for t in z.leaves if t in names)
        mine = alone[(k, slot)] | ((graph.reachable(start=[child]) & blocked.keys()) - cut_alone)
        for b in sorted(mine):
            name = blocked[b]
            if name in out:
                old = out[name]
                out[name] = old._replace(
                    factors=tuple(dict.fromkeys(old.factors + factors)),
                    adjacent=old.adjacent and b in near)
            else:
                out[name] = ZeroBlock(factors, b in near, node_class(graph.nodes[k]))
    return out


class Stop(NamedTuple):
    """A backward pass that stopped at a saved tensor modified in place: the ``node`` that
    needs it (``SigmoidBackward0``); ``what``: the tensor and its edit, in words (see
    :func:`~gradarg.trace.why.gradients.edited`); ``fix``; ``call``: the module call whose
    output that node is, or ``None``; ``below``: parameters below it without a gradient."""

    node: str
    what: str
    fix: str
    call: int | None
    below: tuple[str, ...]


def stopped(roots: Sequence[Any], names: Mapping[torch.Tensor, str], got: set[torch.Tensor],
            owner: Mapping[Any, int], alive: Sequence[torch.Tensor] = ()) -> Stop | None:
    """Where a backward pass through the graph below ``roots`` stops: the first node (output
    side first) whose saved tensor was modified in place after it was saved (its version
    counter shows it), with parameters below it that got no gradient (``got``: those that
    did); else ``None``.  ``owner`` maps a module's output node to its call; ``alive``: module
    calls' inputs still held.  Values saved through saved-tensor hooks are not read."""
    if not roots:
        return None
    graph = Graph(*roots)
    for node, attr, message in in_place_edits(graph.nodes, hooked=False):
        below = [names[t] for b in sorted(graph.reachable(start=[graph.index[node]]))
                 if (t := leaf_tensor(graph.nodes[b])) is not None and t in names
                 and t.requires_grad and t not in got]
        if below:
            what, fix = edited(graph, {n: t for t, n in names.items()}, node, attr, message,
                               alive)
            return Stop(node.name(), what, fix, owner.get(node), tuple(below))
    return None


def refs(tensors: Sequence[Any]) -> list[weakref.ref]:
    """Weak references to the floating tensors of a call's inputs or outputs (the record keeps
    no tensor alive; one freed by then is simply not known)."""
    return [weakref.ref(t) for t in tensors
            if isinstance(t, torch.Tensor) and (t.is_floating_point() or t.is_complex())]


def quick_finite(t: torch.Tensor) -> bool:
    """Whether every entry of ``t`` is finite: its sum is (one reduction, about ten times
    faster than ``isfinite(t).all()`` on the CPU), or, when the sum is not (NaN, Inf, or an
    overflow of finite entries), every entry checked."""
    t = t.detach()
    # cmath.isfinite on the Python number: torch.isfinite on a 0-d tensor is several
    # operations (about 10 us), the same answer for a float, a complex or an integer sum
    if t.layout == torch.strided and t.numel() and cmath.isfinite(t.sum().item()):
        return True
    return finite(t)


def known_finite(rs: Sequence[weakref.ref]) -> bool | None:
    """``True``: every referenced tensor is alive and finite; ``False``: one alive is not
    finite; ``None``: none is non-finite, but one was freed (unknown)."""
    known = True
    for r in rs:
        t = r()
        if t is None:
            known = False
        elif not quick_finite(t):
            return False
    return True if known else None


def first_nonfinite_call(parents: Sequence[int | None], values: Mapping[int, CallValues],
                         root: int, producers: Sequence[Sequence[int]] = (),
                         narrow: Mapping[int, tuple[Any, ...]] | None = None) -> int | None:
    """The module call, inside call ``root`` (whose output is not finite), that made the first
    non-finite value in the forward: its output holds NaN/Inf while each of its inputs is
    finite (checked: alive and finite, or every call that produced it returned finite
    outputs); of such calls the innermost (none inside it qualifies), first in forward
    order.  ``parents[i]`` is call ``i``'s parent; ``values[i]`` the weak references to its
    inputs and outputs; ``producers[i]`` the calls whose outputs reached its inputs;
    ``narrow[i]`` whether call ``i``'s narrow-float outputs were finite when it returned
    (read then: they may be freed since).  ``None`` when no call qualifies (the model's
    input itself is not finite, or the values were freed)."""
    narrow = narrow or {}

    def outs(i: int) -> bool | None:
        known = known_finite(values[i].outs) if i in values else None
        if known is None and i in narrow:
            return narrow[i][0]
        return known

    def ins(i: int) -> bool | None:
        known = known_finite(values[i].ins)
        if known is None and i < len(producers) and producers[i]:
            got = [outs(p) for p in producers[i]]
            if all(g is not None for g in got):
                return all(got)
        return known

    inside = {root}
    for i in range(root + 1, len(parents)):
        if parents[i] in inside:
            inside.add(i)
    made = [i for i in sorted(inside) if i in values and outs(i) is False and ins(i) is True]
    for i in made:
        if not any(j != i and runs_inside(j, i, parents) for j in made):
            return i
    return None


def nonfinite_origin(roots: Sequence[Any]) -> Any | None:
    """The node below ``roots`` whose forward output is the first non-finite value (see
    :func:`~gradarg.trace.why.gradients.forward_origin`), read from the saved values that went
    through no saved-tensor hook (reading those would recompute checkpointed blocks)."""
    index = Graph(*roots).index if roots else None
    return next((o for r in roots if (o := forward_origin(r, index, hooked=False)) is not None),
                None)


_REACH_LIMIT = 20000  # nodes visited per module call when placing a node inside one


def call_of(node: Any, calls: Sequence[tuple[list[Any], list[Any]]],
            parents: Sequence[int | None], within: int) -> int | None:
    """The innermost module call, inside call ``within``, whose own operations include
    ``node``: ``node`` is reached from the call's output nodes without passing through (or
    being) one of its input nodes.  ``calls[i]`` holds call ``i``'s output and input nodes."""
    depth = [0] * len(parents)
    for i, p in enumerate(parents):
        depth[i] = 0 if p is None else depth[p] + 1
    inside = [i for i in range(within, len(parents))
              if i == within or runs_inside(i, within, parents)]
    for i in sorted(inside, key=lambda i: -depth[i]):
        outs, ins = calls[i]
        stop = set(ins)
        if node in stop:
            continue
        seen, todo = set(outs) - stop, [n for n in outs if n not in stop]
        while todo and len(seen) < _REACH_LIMIT:
            n = todo.pop()
            if n is node:
                return i
            for c, _ in children(n):
                if c is not None and c not in seen and c not in stop:
                    seen.add(c)
                    todo.append(c)
    return None


def runs_inside(j: int, i: int, parents: Sequence[int | None]) -> bool:
    """Whether call ``j`` ran inside call ``i`` (``parents[k]``: call ``k``'s parent or None)."""
    p = parents[j]
    while p is not None and p != i:
        p = parents[p]
    return p is not None


_CHECKPOINT = os.path.join("utils", "checkpoint.py")


def reentrant_checkpoint() -> str | None:
    """``"checkpoint"`` when the caller runs inside reentrant ``torch.utils.checkpoint``'s
    forward (``CheckpointFunction.forward``, which runs the block under ``torch.no_grad()``)
    and none of the checkpoint's tensor inputs requires grad (then backward never reaches the
    block: torch warns "None of the inputs have requires_grad=True"); ``"checkpoint-unreached"``
    when one does (the block is recorded again only if backward reaches the checkpoint's
    output); ``None`` outside it.  Read from the Python call stack
    (https://docs.python.org/3/library/inspect.html#inspect.currentframe)."""
    frame = inspect.currentframe()
    while frame is not None:
        code = frame.f_code
        if code.co_filename.endswith(_CHECKPOINT) and getattr(
                code, "co_qualname", code.co_name).endswith("CheckpointFunction.forward"):
            args = frame.f_locals.get("args", ())
            needs = any(isinstance(a, torch.Tensor) and a.requires_grad for a in args)
            return "checkpoint-unreached" if needs else "checkpoint"
        frame = frame.f_back
    return None


# -- read from the recorder's notes (recorder.Recorder: its read-only views) ------------------
def _by_slot(rec: Any) -> dict[int, Any]:
    """Slot -> the node whose output it records (leaf slots left out)."""
    return {slot: key[0] for key, slot in rec.slots.items() if key[1] >= 0}


def roots(rec: Any) -> list[Any]:
    """The nodes of the outputs of the outermost module calls (the model's outputs)."""
    by_slot = _by_slot(rec)
    return list(dict.fromkeys(by_slot[s] for r in rec.raw if r.parent is None
                              for s in (r.outs or []) if s in by_slot))


def forward_nan(rec: Any, index: int) -> Made | None:
    """Outermost call ``index`` returned: when its output is not finite, where the forward's
    first NaN/Inf comes from (:class:`Made`: the innermost call the live values show, then
    inside it the graph's origin, :func:`placed`); ``None`` when the output is finite."""
    outs = [t for r in rec.values[index].outs if (t := r()) is not None]
    if all(quick_finite(t) for t in outs):
        return None
    if known_finite(rec.values[index].ins) is False:
        ins = [nonfinite_entries(r()) for r in rec.values[index].ins]
        return Made(index, "input", held=next((h for h in ins if h), ""))
    parents = [r.parent for r in rec.raw]
    made = first_nonfinite_call(parents, rec.values, index, [r.producers for r in rec.raw],
                                rec.noted.narrow)
    within = index if made is None else made
    by_slot = _by_slot(rec)
    calls = [([by_slot[s] for s in r.outs or [] if s in by_slot],
              [by_slot[s] for s in r.ins if s in by_slot]) for r in rec.raw]
    return placed(calls, parents, within, made)


def placed(calls: Sequence[tuple[list[Any], list[Any]]], parents: Sequence[int | None],
           within: int, made: int | None) -> Made | None:
    """Where the graph below call ``within``'s outputs (``calls[i]``: call ``i``'s output and
    input nodes) puts the forward's first NaN/Inf (:func:`nonfinite_origin`, :func:`call_of`;
    else call ``made``): an input without history it saved (:func:`bad_data`), or an operation."""
    if (origin := nonfinite_origin(calls[within][0])) is None:
        return None if made is None else Made(made, "made")
    at = call_of(origin, calls, parents, within)
    if at is not None and (attr := bad_data(origin)) is not None:
        return Made(at, "input", held=nonfinite_entries(_saved_value(origin, attr)))
    made = at if at is not None else made
    return None if made is None else Made(made, "made", *described(origin))


class GraphNotes:
    """The part of a watch that reads the graph and the values at a few moments: the
    forward's first NaN/Inf (when an outermost call returns), the parameters an all-zero
    factor blocks (at the first exactly-zero gradient of a pass), where a failed backward
    stopped (when the step is read, or the block ends).

    Reads the module calls of ``calls`` (a :class:`~.recorder.Recorder`) and the passes of
    ``grads`` (a :class:`~.gradhooks.GradEvents`) through their read-only views."""

    def __init__(self, watched: Any, calls: Any, grads: Any):
        self.watched, self._calls, self._grads = watched, calls, grads
        self.reset()

    def reset(self) -> None:
        """A new step: nothing read yet."""
        self._forward_nan: Made | None = None
        self._nan_dtype: tuple[str, float] | None = None
        self._zero_blocked: dict[str, ZeroBlock] | None = None
        self._stop: Stop | None = None
        self._unregistered: list[Unregistered] = []
        self._ops: dict[int, list[str]] = {}
        self._loss_ops: list[str] = []

    def operations(self, call: int) -> list[str]:
        """The operations of call ``call`` itself (live; after the block: if noted)."""
        if self.watched.active:
            self.note_operations(call)
        return self._ops.get(call, [])

    @property
    def loss_operations(self) -> list[str]:
        """The operations between the last ``backward()``'s loss and the model's outputs."""
        if self.watched.active:
            self.note_operations(None)
        return self._loss_ops

    def note_operations(self, call: int | None) -> None:
        """Read, while the graph is held, the operations of ``call`` and of the loss."""
        try:
            if call is not None:
                self._ops[call] = call_operations(self._calls, call)
            nodes = self._grads.losses.nodes
            self._loss_ops = (operations_between(nodes, set(roots(self._calls)), 8)
                              if nodes else [])
        except Exception:  # noqa: BLE001 (a graph that cannot be walked: nothing known)
            self._loss_ops = []

    @property
    def forward_nan(self) -> Made | None:
        """Where the forward's first NaN/Inf comes from (:class:`Made`)."""
        return self._forward_nan

    @property
    def overflow(self) -> tuple[str, float] | None:
        """``(dtype, largest finite value)`` when the call that made the forward's first
        NaN/Inf returned Inf in a floating type narrower than float32 (float16, bfloat16):
        an overflow, read from its output values; ``None`` otherwise."""
        return self._nan_dtype

    @property
    def zero_blocked(self) -> Mapping[str, ZeroBlock]:
        """Parameter name -> the all-zero factor that blocks its gradient (empty: none)."""
        return self._zero_blocked or {}

    def note_forward(self, index: int) -> None:
        """Outermost call ``index`` returned: where the forward's first NaN/Inf comes from."""
        if self._forward_nan is not None:
            return
        try:
            self._forward_nan = forward_nan(self._calls, index)
            if self._forward_nan is not None and self._forward_nan[1] == "made":
                call = self._forward_nan[0]
                self._nan_dtype = overflow(self._calls.values.get(call))
                seen = self._calls.noted.narrow.get(call)
                if self._nan_dtype is None and seen is not None and seen[2]:
                    self._nan_dtype = (str(seen[1]).removeprefix("torch."),
                                       float(torch.finfo(seen[1]).max))
        except Exception:  # noqa: BLE001 (never break the user's forward)
            self._forward_nan = None

    def note_zeros(self) -> None:
        """At the first exactly-zero gradient of a pass (the values as the forward used them):
        the parameters an all-zero factor blocks."""
        if self._zero_blocked is not None:
            return
        try:
            self._zero_blocked = zero_blocks(roots(self._calls), self.watched.param_names())
        except Exception:  # noqa: BLE001 (never break the user's backward)
            self._zero_blocked = {}

    def unregistered(self) -> list[Unregistered]:
        """Leaf tensors that require grad and feed this step's forward (reached from the
        model's outputs) without being parameters of the model or inputs of its outermost
        calls: parameters kept in a Python list, a plain tensor attribute (read while the
        hooks are on; kept when the block ends)."""
        if self.watched.active:
            self.note_unregistered()
        return self._unregistered

    def note_unregistered(self) -> None:
        """Walk the step's graph from the model's outputs to its leaves (once per step)."""
        watched = self.watched
        if not watched.backward_seen:
            self._unregistered = []
            return
        try:
            self._unregistered = unregistered(self._calls, roots(self._calls), watched,
                                              self._grads.optimizers)
        except Exception:  # noqa: BLE001 (a graph that cannot be walked: nothing known)
            self._unregistered = []

    def stopped_at(self) -> Stop | None:
        """Where this step's backward stopped at a saved tensor modified in place, if it did
        (read again while the hooks are on; kept when the block ends)."""
        if self.watched.active:
            self.note_stop()
        return self._stop

    def note_stop(self) -> None:
        """Read while the graph is held, when some parameter that requires grad got none and
        a ``backward()`` of the block raised (a saved tensor the optimizer's step modified
        after a completed backward, on a kept graph, stopped nothing)."""
        watched = self.watched
        got = {e.param for e in self._grads.passes}
        if (not watched.backward_seen or self._grads.raised is None
                or all(p in got for p in watched.owner if p.requires_grad)):
            return
        try:
            alive = [t for v in self._calls.values.values() for r in v.ins
                     if (t := r()) is not None]
            self._stop = stopped(roots(self._calls), watched.param_names(), got,
                                 self._calls.node_owner, alive)
        except Exception:  # noqa: BLE001 (a saved tensor that cannot be read: nothing known)
            self._stop = None
        stop = self._stop
        for name, (module, kind) in self._calls.noted.edited.items():
            if stop is not None and stop.what.startswith(f"{name}, "):
                renorm = (" (nn.Embedding(max_norm=...) renormalises the rows it looks up, "
                          "in place, at each call)" if kind == "Embedding" else "")
                self._stop = stop._replace(
                    what=(f"{name} was modified in place inside the forward, by module "
                          f"'{module}' ({kind}) during its own call{renorm} (observed: its "
                          f"version counter went up during that call), after an earlier "
                          f"operation of the same forward had saved it"),
                    fix=(f"use a copy for the other operation ({name}.clone()), or run "
                         f"'{module}' before it; for max_norm, renormalise outside the "
                         f"forward under torch.no_grad()"))
                break
