"""What the setting of a watched step does to each ``.grad``, observed for :mod:`.gradhooks`:
the loss scale of each ``backward()`` (:class:`LossScales`: the outputs of a ``GradScaler``'s
``scale`` are marked, each ``backward()``'s losses looked up), whether DDP synchronised the
backward of each forward (:class:`DdpSync`: ``no_sync``), and the hooks of the user's on a
parameter (:func:`hooks_around`: one hook of the watch's before them and its usual hook after
them, so the gradient is read on both sides).

Imports nothing of the trace room.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from ..graph.values import norm as _norm
from .events import HookedPass, PassEntry

__all__ = ["KEY", "DdpSync", "LossScales", "ParamHooks", "TensorHooked", "hooked_entry",
           "hooks_around", "raw_hook"]

KEY = "gradarg.loss_scale"  # the mark a GradScaler's scale leaves in its output node's metadata
_WALK = 64  # autograd nodes visited below a loss to find a scaled one


def _tensors(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    return []


def _mark(node: Any) -> float | None:
    try:
        return node.metadata.get(KEY)
    except (AttributeError, RuntimeError):  # a node without metadata
        return None


class LossScales:
    """The loss scale of each ``backward()`` call: ``scale`` marks the node of each output of
    an enabled ``GradScaler.scale`` (``Node.metadata``: nothing is kept alive), :meth:`of`
    reads the losses a ``backward()`` was given."""

    def __init__(self) -> None:
        self.seen = False  # a GradScaler's scale ran while the watch listened

    def scaled(self, scaler: Any, outputs: Any) -> None:
        """``scaler.scale`` returned ``outputs``: their nodes are marked with the scale."""
        if not scaler.is_enabled():
            return
        scale = float(scaler.get_scale())
        for t in _tensors(outputs):
            node: Any = t.grad_fn
            if node is not None:
                node.metadata[KEY] = scale
                self.seen = True

    def of(self, nodes: list[Any]) -> float | None:
        """The loss scale of a ``backward()`` whose losses have the nodes ``nodes``: the mark of
        a scaled node on each loss's chain of one-input operations (``scaler.scale(loss) / k``),
        1 when there is none, ``None`` when the losses differ or one adds a scaled term to an
        unscaled one (read below the branch, once a ``scale`` was seen)."""
        if not self.seen:  # no output of this watch's scale anywhere: nothing marked
            return 1.0
        found: set[float | None] = set()
        for node in nodes:
            found.add(self._one(node))
        if not found:
            return 1.0
        return found.pop() if len(found) == 1 else None

    def _one(self, node: Any) -> float | None:
        n, nxt = node, []
        for _ in range(8):  # the chain of one-input operations from the loss down
            mark = _mark(n)
            if mark is not None:
                return float(mark)
            nxt = [c for c, _ in n.next_functions if c is not None]
            if len(nxt) != 1:
                break
            n = nxt[0]
        if len(nxt) < 2:
            return 1.0
        todo, seen = list(nxt), set(nxt)
        while todo and len(seen) < _WALK:  # a branch: a scaled term below it?
            n = todo.pop()
            if _mark(n) is not None:
                return None
            for c, _ in n.next_functions:
                if c is not None and c not in seen:
                    seen.add(c)
                    todo.append(c)
        return 1.0


class DdpSync:
    """Whether DDP synchronises the backward of each call of the watched model: its
    ``require_backward_grad_sync``, which ``no_sync()`` turns off, read when the call starts
    (DDP decides at the forward whether the backward all-reduces)."""

    def __init__(self, modules: list[Any]):
        self._ddp = modules
        self._at: dict[int, bool] = {}

    def note(self, forward: int) -> None:
        self._at[forward] = all(getattr(m, "require_backward_grad_sync", True)
                                for m in self._ddp)
        if len(self._at) > 256:
            del self._at[min(self._at)]

    def synced(self, forward: int) -> bool | None:
        """Whether the backward of call ``forward`` all-reduces (``None``: not read)."""
        return self._at.get(forward)


class ParamHooks:
    """The watch's hook on each parameter (``pass_hook(p, live, make)`` makes it: ``make``
    builds its :class:`.events.PassEntry`), and, on a parameter with hooks of the user's
    (registered before the watch or while it runs: seen by :meth:`registered`), one more
    before theirs, with the pass hook moved after theirs: the gradient backward computed and
    the one that reaches ``.grad`` (:class:`.events.HookedPass`).  A hook of the user's on a
    tensor of the step's graph (an activation) registered while the watch runs gets the same
    pair (:class:`TensorHooked`, kept for the step).

    Attributes
    ----------
    running : callable
        ``running()``: the innermost module call running, ``(name, class name)`` or ``None``
        (set by the owner).
    tensors : list of TensorHooked
        This step's tensors of the graph with hooks of the user's (do not modify).
    """

    def __init__(self, pass_hook: Callable[..., Callable[[torch.Tensor], Any]]):
        self._pass_hook: Callable[..., Any] | None = pass_hook
        self._main: dict[int, tuple[Any, Any, Any]] = {}  # id(tensor) -> (handle, p, live)
        self._around: dict[int, tuple[Any, Any]] = {}  # id(tensor) -> (first, last) handles
        self._ours = False  # while the watch registers a hook of its own
        # id(parameter) -> parameter, whose gradient hooks of the user's turned all zero
        self.zeroed: dict[int, Any] = {}
        self.running: Callable[[], tuple[str, str] | None] = _nobody
        self.tensors: list[TensorHooked] = []
        self._step: dict[int, tuple[Any, Any, Any]] = {}  # id(tensor) -> (first, last, tensor)

    def hook(self, t: torch.Tensor, p: torch.Tensor, live: torch.Tensor | None) -> None:
        """Hook ``t`` (``p``, or ``live``: the tensor FSDP2 computes with in its place)."""
        assert self._pass_hook is not None
        self._ours = True
        try:
            handle = t.register_hook(self._pass_hook(p, live))
        finally:
            self._ours = False
        self._main[id(t)] = (handle, p, live)
        hooks = t._backward_hooks
        if hooks and any(k != handle.id for k in hooks):
            self._hook_around(t)

    def registered(self, t: Any, handle: Any) -> None:
        """A hook was registered on ``t``: on a watched parameter or a tensor of the graph,
        one of the user's (not while a backward runs: its hooks are being read)."""
        if self._ours or self._pass_hook is None or torch._C._current_autograd_node() is not None:
            return
        if id(t) in self._main:
            self._hook_around(t)
        elif isinstance(t, torch.Tensor) and t.grad_fn is not None:
            self._tensor_around(t)

    def _tensor_around(self, t: torch.Tensor) -> None:
        got = self._step.get(id(t))
        if got is None or got[2] is not t:
            rec = TensorHooked(self.running(), [], [])
            self._ours = True
            try:
                got = (t.register_hook(raw_hook(rec.before)),
                       t.register_hook(raw_hook(rec.after)), t)
            finally:
                self._ours = False
            self._step[id(t)] = got
            self.tensors.append(rec)
        hooks_around(t, got[0].id, got[1].id)

    def new_step(self) -> None:
        """A new step: the last step's tensors are let go (their hooks with them)."""
        for first, last, _ in self._step.values():
            first.remove()
            last.remove()
        self._step, self.tensors = {}, []

    def _hook_around(self, t: torch.Tensor) -> None:
        around = self._around.get(id(t))
        if around is None:
            if self._pass_hook is None:  # detached
                return
            handle, p, live = self._main[id(t)]
            box: list[float] = []
            self._ours = True
            try:
                first = t.register_hook(raw_hook(box))
                last = t.register_hook(self._pass_hook(p, live, hooked_entry(box, self.zeroed)))
            finally:
                self._ours = False
            handle.remove()
            around = self._around[id(t)] = (first, last)
        hooks_around(t, around[0].id, around[1].id)

    def detach(self) -> list[Any]:
        """The handles of every hook put on, for the caller to remove."""
        handles = [h for h, _, _ in self._main.values()]  # removing one twice is harmless
        handles += [h for pair in self._around.values() for h in pair]
        handles += [h for first, last, _ in self._step.values() for h in (first, last)]
        self._main, self._around, self._step = {}, {}, {}
        self._pass_hook = None  # the owner's bound method: no reference cycle left
        return handles


def _nobody() -> None:
    return None


@dataclass(eq=False, slots=True)
class TensorHooked:
    """A tensor of the step's graph (not a parameter) on which the user registered a hook
    while the watch ran: the module call running then (``where``: ``(name, class name)``,
    ``None``: outside the model's forward), and the norms of the gradient arriving there
    before the hooks on it (``before``) and after them (``after``), of the last pass (empty
    lists: no gradient arrived)."""

    where: tuple[str, str] | None
    before: list[float]
    after: list[float]


def hooks_around(t: torch.Tensor, first: int, last: int) -> None:
    """Order the hooks on ``t``: hook ``first`` before every other, hook ``last`` after (the
    others keep their order)."""
    hooks = t._backward_hooks
    if not hooks or first not in hooks or last not in hooks:
        return
    keys = list(hooks)
    if keys[0] == first and keys[-1] == last:
        return
    a, b = hooks[first], hooks[last]
    rest = [(k, v) for k, v in hooks.items() if k not in (first, last)]
    hooks.clear()  # the same dict (torch reads it at each backward), in the new order
    hooks[first] = a
    hooks.update(rest)
    hooks[last] = b


def hooked_entry(box: list[float], zeroed: dict[int, Any]) -> Callable[..., PassEntry]:
    """The constructor of the pass entries of a parameter with hooks of the user's:
    :class:`.events.HookedPass` with ``raw`` the norm the hook before them put in ``box``;
    a parameter whose gradient they turned all zero goes in ``zeroed`` (by ``id``), one that
    they did not leaves it."""

    def make(p: Any, n: float, held: float | None, sparse: bool, after: float | None,
             forward: int) -> PassEntry:
        raw = box.pop() if box else None
        if raw and n == 0.0:
            zeroed[id(p)] = p
        else:
            zeroed.pop(id(p), None)
        return HookedPass(p, n, held, sparse, after, forward, raw=raw)

    return make


def raw_hook(box: list[float]) -> Callable[[torch.Tensor], None]:
    """A hook that puts the norm of the gradient it sees in ``box`` (the last one only)."""

    def hook(g: torch.Tensor) -> None:
        box[:] = [_norm(g)]

    return hook
