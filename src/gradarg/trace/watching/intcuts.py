"""Integer results computed in the model's forward from values with autograd history:
``argmax``, ``argmin``, a comparison, a cast to an integer dtype.  An integer or boolean tensor
carries no gradient, so a module output that only reaches the loss through one (a hard choice
``one_hot(logits.argmax(-1))``, a codebook index ``dist.argmin(-1)``) gets none, and torch
says nothing.

How it is seen.  On a step recorded in full (:class:`.detail.Detail`), a function mode
(:mod:`.fnmodes`) watches the torch calls of the model's outermost call, from its forward
pre-hook to its forward hook.  A call that returns a tensor of an integer or boolean dtype
given a tensor with autograd history is noted (its name, that tensor's autograd node, the
user's line), at most :data:`KEPT` per step.  When the model's call returns, each note is traced
back through the graph from that node to the nearest outputs of recorded module calls (the
recorder's node owners): the calls whose outputs it was computed from, and the calls around
them that returned the same tensor (:attr:`IntCuts.found`).

Not seen: a forward that runs under ``torch.compile`` (its calls are traced by Dynamo, not
run: the window is not opened when a compiled frame is on the call stack), calls outside the
model's call (the loss), an integer result computed from a parameter itself (see
:mod:`.sourceuse`).

Imports :mod:`.fnmodes`, :mod:`.patches`, :mod:`.sites` (whose frames are the user's),
:mod:`.graphnotes` (``runs_inside``) and :func:`gradarg.trace.graph.nodes.saved_value` (saved
indices read without running saved-tensor hooks) only (:mod:`.detail` and :mod:`.recorder` for
their types).
"""

from __future__ import annotations

import os
import sys
import weakref
from collections.abc import Mapping
from types import FrameType
from typing import TYPE_CHECKING, Any, NamedTuple

import torch

from ..graph.nodes import saved_value
from . import fnmodes, patches
from .graphnotes import runs_inside
from .sites import user_site

if TYPE_CHECKING:
    from .detail import Detail
    from .recorder import Recorder

__all__ = ["IntCut", "IntCuts", "Picked", "Selected", "few_rows", "said", "selection"]

KEPT = 8  # integer results noted per step
WALK = 256  # autograd nodes visited per note, back to the module outputs it came from
_DYNAMO = os.path.join("torch", "_dynamo", "eval_frame.py")


class IntCut(NamedTuple):
    """An integer result: the call's name (``op``, e.g. ``"argmax"``), its dtype, where the
    user's code made it (``site``: ``file:line``, ``""`` where not found) and the indices of
    the recorded module calls whose outputs it was computed from (``calls``)."""

    op: str
    dtype: str
    site: str
    calls: frozenset[int]


class IntCuts:
    """The integer results of each full step's forward, read when the model's call returns.

    Parameters
    ----------
    model : torch.nn.Module
        The watched model: the window is its outermost call.
    calls : Recorder
        Its read-only views ``raw`` (the step's calls so far) and ``node_owner`` (autograd
        node -> the call whose output it made).
    detail : Detail
        Which steps are recorded in full: a window opens on those only.
    """

    def __init__(self, model: torch.nn.Module, calls: Recorder, detail: Detail):
        self.model, self.calls, self.detail = model, calls, detail
        self.found: list[IntCut] = []  # the current step's
        # (op, dtype, site, node, the integer result itself): held until the model's call
        # returns, so that no other tensor takes its memory while indices are matched by it
        self._notes: list[tuple[str, str, str, Any, torch.Tensor]] = []
        self.selected: list[Selected] = []  # the current step's
        self.rows_picked: list[Picked] = []  # the current step's
        self._mode: fnmodes.Following | None = None
        self._depth = 0
        self._handles: list[Any] = []

    def attach(self) -> None:
        self._handles = [
            self.model.register_forward_pre_hook(patches.module_hook(self._open)),
            self.model.register_forward_hook(patches.module_hook(self._close), always_call=True)]

    def detach(self) -> list[Any]:
        """Pop the mode (a forward that never returned); the hooks' handles, for the owner."""
        self._pop()
        handles, self._handles = self._handles, []
        return handles

    def _open(self, *args: Any) -> None:
        self._depth += 1
        if self._depth > 1:
            return
        if len(self.calls.raw) <= 1:  # a new step: the calls' indices start again
            self.found, self.selected, self.rows_picked = [], [], []
        if self.detail.full and not _compiled_frame():
            self._notes = []
            self._mode = fnmodes.push(self._seen)

    def _close(self, *args: Any) -> None:
        self._depth = max(0, self._depth - 1)
        if self._depth or self._mode is None:
            return
        self._pop()
        owner, raw = self.calls.node_owner, self.calls.raw
        for op, dtype, site, node, out in self._notes:
            calls = _fed_by(node, owner)
            if calls:
                cut = IntCut(op, dtype, site, _returned_by(calls, raw))
                self.found.append(cut)
                self.selected.extend(_selected(cut, calls, out.data_ptr(), self.calls))
        self._notes = []  # the nodes are let go

    def _pop(self) -> None:
        if self._mode is not None:
            fnmodes.pop(self._mode, leave=True)
            self._mode = None

    def _seen(self, func: Any, args: Any, kwargs: Any, out: Any) -> None:
        if type(out) is not torch.Tensor:
            return
        if out.is_floating_point() or out.is_complex():
            if self._notes and out.requires_grad:
                self._picked(args, kwargs)
            return
        if len(self._notes) >= KEPT:
            return
        for t in fnmodes.tensors_in(args, kwargs):
            node = t.grad_fn
            if node is not None:
                op = str(getattr(func, "__name__", "") or "")
                self._notes.append((op.strip("_"), str(out.dtype), user_site(), node, out))
                return

    def _picked(self, args: Any, kwargs: Any) -> None:
        """A call that returned floats from a leaf (a parameter) and one of the noted integer
        results: how many distinct rows that index picked (:attr:`IntCuts.rows_picked`)."""
        ts = fnmodes.tensors_in(args, kwargs)
        ptrs = {n[4].data_ptr(): n for n in self._notes}
        idx = next((t for t in ts if not t.is_floating_point() and t.data_ptr() in ptrs), None)
        leaf = next((t for t in ts if t.is_leaf and t.requires_grad and t.dim() >= 1), None)
        if idx is None or leaf is None or len(self.rows_picked) >= KEPT or idx.numel() > 1 << 20:
            return
        op, _, site, _, _ = ptrs[idx.data_ptr()]
        self.rows_picked.append(Picked(weakref.ref(leaf), tuple(leaf.shape), op, site,
                                       int(idx.unique().numel()), idx.numel()))


def _compiled_frame() -> bool:
    """Whether a frame of ``torch.compile``'s entry (Dynamo's ``eval_frame``) is on the call
    stack: the forward is then traced, and a mode pushed from a hook would be guarded on."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        code = frame.f_code  # torch.compiler.disable's own wrapper lives in that file too
        if code.co_filename.endswith(_DYNAMO) and "DisableContext" not in getattr(
                code, "co_qualname", "DisableContext"):
            return True
        frame = frame.f_back
    return False


def _fed_by(node: Any, owner: Mapping[Any, int]) -> frozenset[int]:
    """The calls whose outputs ``node`` was computed from: on each path back from it, the
    first node a recorded call owns (at most :data:`WALK` nodes visited)."""
    found, seen, todo = set(), {node}, [node]
    while todo and len(seen) <= WALK:
        f = todo.pop()
        i = owner.get(f)
        if i is not None:
            found.add(i)
            continue
        for nxt, _ in f.next_functions:
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return frozenset(found)


class Picked(NamedTuple):
    """A leaf tensor (``param``: a weak reference to it, a parameter; ``shape``) indexed with
    an integer result of the forward (``op`` at ``site``): ``distinct`` rows picked by
    ``values`` index values."""

    param: Any
    shape: tuple[int, ...]
    op: str
    site: str
    distinct: int
    values: int


class Selected(NamedTuple):
    """A recorded call (``call``) that took values selected with an integer result (``cut``)
    from another tensor (``node``: the selecting node's name, ``IndexBackward0``), its input's
    graph holding no path back to the outputs of the calls that index was computed from."""

    call: int
    cut: IntCut
    node: str


# nodes that select rows of a tensor with an integer index they save
_SELECT = {"IndexBackward0": "_saved_indices", "EmbeddingBackward0": "_saved_indices",
           "IndexSelectBackward0": "_saved_index", "GatherBackward0": "_saved_index"}


def _selected(cut: IntCut, sources: frozenset[int], ptr: int, rec: Any) -> list[Selected]:
    """The recorded calls whose inputs hold, in their graph, a node that selected with the
    index at ``ptr`` (the integer result's memory) and no node a call of ``sources`` owns: the
    gradient of what follows them cannot reach ``sources`` through them."""
    owner, found = rec.node_owner, []
    by_slot = {slot: key[0] for key, slot in rec.slots.items() if key[1] >= 0}
    parents = [r.parent for r in rec.raw]
    for i, r in enumerate(rec.raw):
        starts = [by_slot[s] for s in r.ins if s in by_slot]
        if not starts or i in sources or any(runs_inside(i, j, parents) for j in sources):
            continue
        picked, reached, seen, todo = None, False, set(starts), list(starts)
        while todo and len(seen) <= WALK and not reached:
            n = todo.pop()
            if owner.get(n) in sources:
                reached = True
                break
            attr = _SELECT.get(type(n).__name__)
            if (attr is not None and picked is None
                    and _holds(saved_value(n, attr, hooked=False), ptr)):
                picked = type(n).__name__
            todo.extend(c for c, _ in n.next_functions if c is not None and c not in seen)
            seen.update(c for c, _ in n.next_functions if c is not None)
        if picked is not None and not reached:
            found.append(Selected(i, cut, picked))
    return found


def _holds(saved: Any, ptr: int) -> bool:
    """Whether a saved index (a tensor, or a tuple of them and None) is the memory ``ptr``."""
    items = saved if isinstance(saved, (tuple, list)) else (saved,)
    return any(isinstance(t, torch.Tensor) and t.data_ptr() == ptr for t in items)


def _returned_by(calls: frozenset[int], raw: list[Any]) -> frozenset[int]:
    """``calls`` and the calls around each that returned its output as theirs (a
    ``Sequential`` returns its last child's output: the same tensor)."""
    more = set(calls)
    for i in calls:
        outs, j = set(raw[i].outs or ()), raw[i].parent
        while outs and j is not None and outs & set(raw[j].outs or ()):
            more.add(j)
            j = raw[j].parent
    return frozenset(more)


def said(cut: IntCut, name: str) -> str:
    """What a module's output that got no gradient met on its way to the loss, in words."""
    at = f" at {cut.site}" if cut.site else ""
    return (f"its values reached {cut.op}{at} (observed), whose result is an integer tensor "
            f"({cut.dtype}) that carries no gradient, so the path to the loss is cut there "
            f"(argmax, argmin, comparisons and integer casts have no derivative); to train "
            f"'{name}' through a hard choice use the straight-through trick "
            f"(F.gumbel_softmax(logits, hard=True), or y_hard - y_soft.detach() + y_soft), "
            f"or weight by softmax probabilities instead")


def selection(w: Any) -> str | None:
    """The outermost :class:`Selected` call of the step, in words (``None``: none): what it
    took was selected with an index computed from other calls' outputs, and its input's graph
    does not reach them, so the gradient of everything after it stops at that index."""
    picked = {s.call: s for s in w.cuts.selected if s.call < len(w.modules)}
    outer = [s for i, s in picked.items() if w.modules[i].parent not in picked]
    if not outer:
        return None
    s = outer[0]
    c, cut = w.modules[s.call], s.cut
    inner = {i for i in cut.calls if i < len(w.modules) and w.modules[i].parent is not None}
    inner = inner or {i for i in cut.calls if i < len(w.modules)}  # the model's own call
    src = [w.modules[i] for i in sorted(inner) if w.modules[i].parent not in inner]
    names = [c2.name for c2 in src]
    params = [n for n, r in w.parameters.items() if any(
        r.module == m or r.module.startswith(m + ".") for m in names if m != "(model)")]
    at = f" at {cut.site}" if cut.site else ""
    return (f"module '{c.name}' ({c.kind}) took values selected ({s.node}) with the index "
            f"{cut.op}{at} computed from the output of {', '.join(repr(n) for n in names)}, "
            f"and its input has no path back to that output (observed: the graph of its "
            f"input): the gradient of everything after '{c.name}' stops at the index and never "
            f"reaches {', '.join(params[:3]) or 'them'}{', ...' if len(params) > 3 else ''}, "
            f"which train only on terms that use that output directly; a straight-through "
            f"estimator (z + (selected - z).detach()) passes the gradient on")


FEW_ROWS = 4  # at most 1/FEW_ROWS of the rows picked by FEW_ROWS times as many values: a collapse


def few_rows(w: Any) -> str | None:
    """A parameter indexed with an integer result of the forward (a codebook by ``argmin``)
    whose index picked at most a :data:`FEW_ROWS`-th of its rows though it held at least
    :data:`FEW_ROWS` times as many values: the other rows get no gradient from it."""
    for p in w.cuts.rows_picked:
        rows, param = p.shape[0], p.param()
        if param is not None and p.distinct * FEW_ROWS <= rows and p.values >= FEW_ROWS * rows:
            try:
                name = w.param_name(param)
            except KeyError:
                continue
            at = f" at {p.site}" if p.site else ""
            g = param.grad
            zero = (int((g.detach().reshape(rows, -1) == 0).all(1).sum())
                    if isinstance(g, torch.Tensor) and g.layout == torch.strided else 0)
            seen = (f"; {zero} rows of its .grad are exactly zero (read from .grad as the "
                    f"summary was made)" if zero else "")
            return (f"{name} ({rows} rows) was indexed with {p.op}{at} over {p.values} values, "
                    f"which picked only {p.distinct} of its rows (observed: the index's "
                    f"distinct values): the other {rows - p.distinct} rows get no gradient from "
                    f"that selection{seen}, and entries never chosen (dead codes of a codebook) "
                    f"stay where they started; initialise them from the data (k-means) or reset "
                    f"the unused ones to recent inputs")
    return None
