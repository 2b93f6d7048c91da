"""What the setting of a watched step does to each ``.grad``, observed for :mod:`.gradhooks`:
the loss scale of each ``backward()`` (:class:`LossScales`: the outputs of a ``GradScaler``'s
``scale`` are marked, each ``backward()``'s losses looked up), whether DDP synchronised the
backward of each forward (:class:`DdpSync`: ``no_sync``), and the hooks of the user's on a
parameter or an activation (:class:`ParamHooks`: the gradient read on both sides of them,
through public hooks only).

Imports the graph room's readers and, of the watch, only ``patches``' count of running
``backward()`` calls.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from ..graph.nodes import accumulator, edges_into
from ..graph.values import norm as _norm
from . import patches
from .events import HookedPass, PassEntry

__all__ = ["KEY", "DdpSync", "LossScales", "ParamHooks", "TensorHooked", "entry_maker",
           "raw_hook"]

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
    """The watch's hook on each parameter, and what the hooks of the user's on it did.

    ``pass_hook(p, live, make)`` makes the watch's tensor hook on a parameter (``make``
    builds its :class:`.events.PassEntry`).  Tensor hooks run in the order they were
    registered (public ``Tensor.register_hook``; nothing of torch's private state is read
    or reordered), so the gradient on each side of the user's hooks is read as follows:

    - hooks registered while the watch runs (seen through the patched ``register_hook``,
      :func:`.patches.register_hook_registration_hook`): a hook of the watch's is registered
      just before the first of them, and the pass hook is registered again after each one;
    - hooks registered before the watch began: the pass hook, registered when the watch
      began, runs after them, and the gradient before them is what the autograd nodes that
      use the parameter send it: at a ``backward()`` call, the nodes whose next functions
      hold the parameter's ``AccumulateGrad`` (``trace.graph.nodes.edges_into``)
      get a post hook (``Node.register_hook``) that keeps their ``grad_inputs`` for it
      (summed when several send one), removed when the call returns.  This runs at the
      block's first four ``backward()`` calls for the parameters they reach (a parameter
      reached by none of them, e.g. a GAN's generator not trained at first, is not read
      this way), and at every later call for a parameter whose gradient was seen changed
      between those nodes and the pass hook.

    A hook of the user's on a tensor of the step's graph (an activation) registered while the
    watch runs gets the same pair of hooks around it (:class:`TensorHooked`, kept for the step).

    Attributes
    ----------
    running : callable
        ``running()``: the innermost module call running, ``(name, class name)`` or ``None``
        (set by the owner).
    tensors : list of TensorHooked
        This step's tensors of the graph with hooks of the user's (do not modify).
    zeroed : dict
        ``id(parameter) -> parameter``: those whose gradient hooks of the user's turned all
        zero at their last pass.
    masked : callable
        ``masked(parameter, before, after)``: called with the gradient before and after the
        user's hooks when they changed it (set by the owner).
    """

    def __init__(self, pass_hook: Callable[..., Callable[[torch.Tensor], Any]]):
        self._pass_hook: Callable[..., Any] | None = pass_hook
        self._main: dict[int, _Hooked] = {}  # id(tensor) -> its hooks
        self._ours = False  # while the watch registers a hook of its own
        self.zeroed: dict[int, Any] = {}
        self.masked: Callable[[Any, torch.Tensor, torch.Tensor], None] = _ignore
        self.running: Callable[[], tuple[str, str] | None] = _nobody
        self.tensors: list[TensorHooked] = []
        self._step: dict[int, _Around] = {}  # id(activation) -> its hooks, this step
        self._unchecked: set[int] = set()  # tensors not yet compared at a backward()
        self._changed: set[int] = set()  # tensors whose gradient a hook was seen to change
        self._raw: dict[int, torch.Tensor] = {}  # id(tensor) -> what its users sent, this call
        self._nodes: list[Any] = []  # the post hooks on those users, this call
        self._first_calls = _FIRST_CALLS  # backward() calls left that read unchecked tensors

    def hook(self, t: torch.Tensor, p: torch.Tensor, live: torch.Tensor | None) -> None:
        """Hook ``t`` (``p``, or ``live``: the tensor FSDP2 computes with in its place)."""
        assert self._pass_hook is not None
        rec = _Hooked(t, p, live, [])
        rec.handle = self._register(t, self._tensor_hook(rec))
        self._main[id(t)] = rec
        self._unchecked.add(id(t))

    def _register(self, t: torch.Tensor, fn: Callable[[torch.Tensor], Any]) -> Any:
        self._ours = True
        try:
            return t.register_hook(fn)
        finally:
            self._ours = False

    def _tensor_hook(self, rec: _Hooked) -> Callable[[torch.Tensor], Any]:
        assert self._pass_hook is not None
        inner = self._pass_hook(rec.p, rec.live, entry_maker(rec.box, self.zeroed))
        raw, key, box = self._raw, id(rec.t), rec.box
        unchecked, changed = self._unchecked, self._changed

        masked, p = self.masked, rec.p

        def hook(g: torch.Tensor | None) -> Any:
            r = raw.pop(key, None)
            if g is None:  # autograd.grad in a backward asked for it, unused: not the pass
                return None
            if r is not None:  # what the nodes using the tensor sent it, before any hook
                unchecked.discard(key)
                if r is not g and not _same(r, g):
                    box[:] = [_norm(r)]
                    changed.add(key)
                    masked(p, r, g)
            return inner(g)

        return hook

    # -- a backward() call --------------------------------------------------------------------
    def backward_called(self, tensors: Any) -> None:
        """``torch.autograd.backward(tensors)`` starts: the users of each tensor still to be
        compared get a post hook (see the class)."""
        if patches.backward_depth() > 1 or self._pass_hook is None:
            return
        keys = set(self._changed)
        if self._unchecked and self._first_calls > 0:
            self._first_calls -= 1
            keys |= self._unchecked
        if not keys:
            return
        accs: dict[Any, int] = {}
        for key in keys:
            rec = self._main.get(key)
            if rec is None or not rec.t.requires_grad:
                continue
            try:
                accs[accumulator(rec.t)] = key
            except RuntimeError:  # not a leaf that requires grad (any more)
                continue
        if not accs:
            return
        roots = [t.grad_fn for t in _tensors(tensors) if t.grad_fn is not None]
        for node, slots in edges_into(roots, accs).items():
            self._nodes.append(node.register_hook(_keep(slots, self._raw)))

    def backward_done(self) -> None:
        """The ``backward()`` call returned or raised: the post hooks come off."""
        if patches.backward_depth() > 1:
            return
        for handle in self._nodes:
            handle.remove()
        self._nodes = []
        self._raw.clear()

    # -- a hook of the user's -----------------------------------------------------------------
    def registered(self, when: str, t: Any, handle: Any) -> None:
        """``t.register_hook`` is about to run (``when`` "before") or ran ("after"): on a
        watched parameter or a tensor of the graph, a hook of the user's (not while a
        ``backward()`` runs: its hooks are being read)."""
        if self._ours or self._pass_hook is None or patches.backward_depth():
            return
        rec = self._main.get(id(t))
        if rec is not None:
            if when == "before" and rec.first is None:
                rec.first = self._register(t, raw_hook(rec.box, only_empty=True))
            elif when == "after":  # the pass hook again, after theirs
                rec.handle.remove()
                rec.handle = self._register(t, self._tensor_hook(rec))
        elif isinstance(t, torch.Tensor) and t.grad_fn is not None:
            self._tensor_around(when, t)

    def _tensor_around(self, when: str, t: torch.Tensor) -> None:
        got = self._step.get(id(t))
        if got is None or got.t is not t:
            if when == "after":  # its "before" was not seen: nothing to read around
                return
            rec = TensorHooked(self.running(), [], [])
            got = self._step[id(t)] = _Around(t, rec, self._register(t, raw_hook(rec.before)))
            self.tensors.append(rec)
        elif when == "after":
            if got.last is not None:
                got.last.remove()
            got.last = self._register(t, raw_hook(got.rec.after))

    def new_step(self) -> None:
        """A new step begins: the last step's tensors are let go (their hooks with them)."""
        for got in self._step.values():
            got.first.remove()
            if got.last is not None:
                got.last.remove()
        self._step, self.tensors = {}, []

    def detach(self) -> list[Any]:
        """The handles of every hook put on, for the caller to remove."""
        handles = [h for rec in self._main.values() for h in (rec.handle, rec.first)
                   if h is not None]
        handles += [h for got in self._step.values() for h in (got.first, got.last)
                    if h is not None]
        handles += self._nodes
        self._main, self._step, self._nodes = {}, {}, []
        self._raw.clear()
        self._pass_hook = None  # the owner's bound method: no reference cycle left
        return handles


_FIRST_CALLS = 4  # backward() calls that read the gradient before hooks predating the watch


@dataclass(eq=False, slots=True)
class _Hooked:
    t: torch.Tensor  # the tensor hooked: the parameter, or FSDP2's tensor in its place
    p: torch.Tensor
    live: torch.Tensor | None
    box: list[float]  # the norm before the hooks of the user's, this pass
    handle: Any = None  # the pass hook's
    first: Any = None  # the hook before the first one of the user's registered in the block


@dataclass(eq=False, slots=True)
class _Around:
    t: torch.Tensor
    rec: TensorHooked
    first: Any
    last: Any = None


def _keep(slots: list[tuple[int, int]], raw: dict[int, torch.Tensor]) -> Callable[..., None]:
    def hook(grad_inputs: Any, grad_outputs: Any) -> None:
        for i, key in slots:
            g = grad_inputs[i]
            if g is None:
                continue
            prev = raw.get(key)
            try:
                raw[key] = g if prev is None else prev + g
            except RuntimeError:  # layouts that do not add: not compared this call
                raw.pop(key, None)

    return hook


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether ``b`` holds ``a``'s values (a sum in another order: within 1e-6)."""
    try:
        if a.shape != b.shape:
            return False
        if a.is_sparse or b.is_sparse:
            return abs(_norm(a) - _norm(b)) <= 1e-6 * max(_norm(b), 1e-30)
        return torch.allclose(a, b, rtol=1e-6, atol=0.0, equal_nan=True)
    except RuntimeError:
        return True  # not comparable: no claim made


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


def _ignore(*args: Any) -> None:
    return None


def entry_maker(box: list[float], zeroed: dict[int, Any]) -> Callable[..., PassEntry]:
    """The constructor of a parameter's pass entries: a :class:`.events.PassEntry`, or,
    when the gradient before the user's hooks was read into ``box``, a
    :class:`.events.HookedPass` with ``raw`` its norm; a parameter whose gradient they
    turned all zero goes in ``zeroed`` (by ``id``), one that they did not leaves it."""

    def make(p: Any, n: float, held: float | None, sparse: bool, after: float | None,
             forward: int) -> PassEntry:
        raw = box.pop() if box else None
        if raw and n == 0.0:
            zeroed[id(p)] = p
        else:
            zeroed.pop(id(p), None)
        if raw is None:
            return PassEntry(p, n, held, sparse, after, forward)
        return HookedPass(p, n, held, sparse, after, forward, raw=raw)

    return make


def raw_hook(box: list[float], only_empty: bool = False) -> Callable[[torch.Tensor], None]:
    """A hook that puts the norm of the gradient it sees in ``box`` (the last one only;
    ``only_empty``: unless ``box`` holds one already)."""

    def hook(g: torch.Tensor | None) -> None:
        if g is not None and not (only_empty and box):
            box[:] = [_norm(g)]

    return hook
