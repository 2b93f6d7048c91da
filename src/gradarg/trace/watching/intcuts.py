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

Imports :mod:`.fnmodes`, :mod:`.patches` and :mod:`.observed` (whose frames are the user's)
only (:mod:`.detail` and :mod:`.recorder` for their types).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from types import FrameType
from typing import TYPE_CHECKING, Any, NamedTuple

import torch

from . import fnmodes, patches
from .observed import user_site

if TYPE_CHECKING:
    from .detail import Detail
    from .recorder import Recorder

__all__ = ["IntCut", "IntCuts", "said"]

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
        self._notes: list[tuple[str, str, str, Any]] = []
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
            self.found = []
        if self.detail.full and not _compiled_frame():
            self._notes = []
            self._mode = fnmodes.push(self._seen)

    def _close(self, *args: Any) -> None:
        self._depth = max(0, self._depth - 1)
        if self._depth or self._mode is None:
            return
        self._pop()
        owner, raw = self.calls.node_owner, self.calls.raw
        for op, dtype, site, node in self._notes:
            calls = _fed_by(node, owner)
            if calls:
                self.found.append(IntCut(op, dtype, site, _returned_by(calls, raw)))
        self._notes = []  # the nodes are let go

    def _pop(self) -> None:
        if self._mode is not None:
            fnmodes.pop(self._mode, leave=True)
            self._mode = None

    def _seen(self, func: Any, args: Any, kwargs: Any, out: Any) -> None:
        if (type(out) is not torch.Tensor or out.is_floating_point() or out.is_complex()
                or len(self._notes) >= KEPT):
            return
        for t in fnmodes.tensors_in(args, kwargs):
            node = t.grad_fn
            if node is not None:
                op = str(getattr(func, "__name__", "") or "")
                self._notes.append((op.strip("_"), str(out.dtype), user_site(), node))
                return


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
