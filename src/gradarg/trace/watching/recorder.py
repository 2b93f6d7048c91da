"""The module calls of a watched step, one part of :class:`~gradarg.trace.watching.watch.GradWatch`.

Forward pre-hooks and hooks on every module note the order in which modules ran and hang a
hook on each tensor that enters or leaves a module (``Node.register_prehook`` for a non-leaf,
``Tensor.register_hook`` for a leaf), and on the edges by which a call sends gradient to its
inputs when another call shares them.  Each hook stores one norm;
:func:`~gradarg.trace.watching.records.assemble` turns the notes into records.  What happens
to each parameter's ``.grad`` is the other part's (:mod:`.gradhooks`); what the graph and the
values show, :mod:`.graphnotes`.  A new kind of note about module calls goes here.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping
from functools import partial
from types import MappingProxyType
from typing import Any

import torch

from ..graph.nodes import children, leaf_tensor
from ..graph.values import norm as _norm
from ..graph.values import tensors as _tensors
from . import graphnotes
from .arrivals import leaf_arrived as _leaf_arrived
from .arrivals import node_arrived as _node_arrived
from .callnotes import CallNotes
from .cutnotes import CutNotes
from .deadunits import DYING, DyingOutputs
from .detail import Detail, ModuleHooks
from .gradhooks import GradEvents
from .model import Watched
from .records import ROOT_NAME, CallInputs, CallValues, OpenSum, RawCall
from .sentinel import producers_of

__all__ = ["Recorder"]

_SENT_LIMIT = 2048  # autograd nodes visited per module call to find the edges to its inputs


def _nothing(*args: Any) -> None:
    return None


class Recorder:
    """Hooks on a model's module calls and what they noted during the last step.

    Parameters
    ----------
    watched : Watched
        The model and the step's progress, shared with the other parts.
    grads : GradEvents
        The ``.grad`` part: told when a call of the model starts and when a step begins, and
        asked to hook the parameters FSDP2 puts on a module for a forward.
    detail : Detail
        Which steps are recorded in full; on a light step the module-call hooks do nothing.
    """

    def __init__(self, watched: Watched, grads: GradEvents, detail: Detail):
        self.watched, self._grads, self._detail, self._light = watched, grads, detail, False
        self._on_new_step: Callable[[], None] = _nothing  # both set by listen()
        self._on_outer_return: Callable[[int], None] = _nothing
        # FSDP2 computes with unsharded copies of the parameters it puts on the modules during
        # the forward: the parameters registered at construction never see a gradient
        self._swappable: dict[Any, list[tuple[str, torch.Tensor]]] = {}
        if watched.engine == "FSDP2":
            for m in watched.names:
                direct = list(m.named_parameters(recurse=False))
                if direct:
                    self._swappable[m] = direct
        self._swapped: dict[int, torch.Tensor] = {}
        self._hooks: ModuleHooks | None = None  # set by attach()
        self._tensor_handles: list[Any] = []
        # evaluation calls (under no_grad after a training step: a validation) skipped whole
        self._skipped: Any = None
        self.evaluations = 0
        self.version = 0  # bumped at each call and step: part of the record's cache key
        self._notes, self._dying = CallNotes(watched.owner, watched.names), DyingOutputs()
        self._cuts = CutNotes()
        self._reset()

    def listen(self, *, new_step: Callable[[], None],
               outer_return: Callable[[int], None]) -> None:
        """Call ``new_step()`` when a new step begins, ``outer_return(call)`` when an
        outermost module call returns."""
        self._on_new_step, self._on_outer_return = new_step, outer_return

    # -- read-only views (for the graph notes and the record) ---------------------------------
    @property
    def raw(self) -> list[RawCall]:
        """One note per module call of the step, in forward order (do not modify)."""
        return self._raw

    @property
    def slots(self) -> dict[tuple[Any, int], int]:
        """``(node or id, output number)`` of a hooked tensor -> its slot (do not modify)."""
        return self._slots

    @property
    def values(self) -> dict[int, CallValues]:
        """Call -> weak references to its inputs and outputs (do not modify)."""
        return self._values

    @property
    def node_owner(self) -> dict[Any, int]:
        """Autograd node -> the innermost call whose output it made (do not modify)."""
        return self._node_owner

    @property
    def late(self) -> frozenset[int]:
        """Calls that started after a backward pass reached the model within the same step:
        recomputations during backward (``torch.utils.checkpoint``), or forwards after it."""
        return frozenset(self._late)

    @property
    def cuts(self) -> CutNotes:
        """Calls of trainable modules whose outputs had no history (read-only views)."""
        return self._cuts

    @property
    def detached(self) -> Mapping[int, int]:
        """Call -> the later call that took its output without autograd history: the same
        memory (``data_ptr``, the output still alive), no graph: a ``.detach()`` or ``.data``
        between them, observed."""
        return MappingProxyType(self._detached)

    @property
    def noted(self) -> CallNotes:
        """In-place edits of parameters inside calls, integer inputs and narrow-float outputs'
        finiteness (:class:`.callnotes.CallNotes`: read-only views)."""
        return self._notes

    def running(self) -> tuple[str, str] | None:
        """The innermost module call running: ``(name, class name)``; ``None``: none."""
        if not self._stack:
            return None
        module = self._raw[self._stack[-1]].module
        return self.watched.names.get(module, ROOT_NAME), type(module).__name__

    def notes(self) -> dict[str, Any]:
        """What :func:`~.records.assemble` reads: the calls, the arrivals at each slot, the
        slots' shapes, the dying units and what each call sent back to its inputs."""
        for open_key in list(self._sent_open):  # edges that never got a gradient this pass
            self._close_sent(open_key)
        return {"raw": self._raw, "arrivals": self._arrivals, "shapes": self._shapes,
                "dead": self._dying.read(self._raw), "sent": {i: self._sent.get(i, []) for i in self._sent_edges}}

    def key(self) -> tuple[int, ...]:
        """Changes when what :meth:`notes` returns does."""
        return (self.version, len(self._arrivals), sum(map(len, self._sent.values())))

    def detach(self) -> list[Any]:
        """The handles of every hook this part put on, for the caller to remove."""
        handles, self._tensor_handles = self._tensor_handles, []
        if self._hooks is not None:  # attached
            handles, self._hooks = self._hooks.detach() + handles, None
        return handles

    def forget(self) -> None:
        """Drop the references to the graph and the tensors (the records stay readable)."""
        self._dying.read(self._raw)  # the outputs kept are read, then let go
        for held in (self._slot_refs, self._slots, self._swapped, self._node_owner,
                     self._node_outputs, self._out_ptr):
            held.clear()

    def _reset(self) -> None:
        for h in self._tensor_handles:
            h.remove()
        self._tensor_handles = []
        self.version += 1
        self.watched.backward_seen = False
        self._grads.new_step()
        self._on_new_step()
        self._raw: list[RawCall] = []  # one note per call (outs filled in when it returns)
        self._stack: list[int] = []
        self._slots: dict[tuple[Any, int], int] = {}  # (id, version) of a hooked tensor -> slot
        self._slot_refs: list[Any] = []  # keeps hooked leaf tensors' ids unique
        self._shapes: list[tuple[int, ...]] = []
        self._node_outputs: dict[Any, list[tuple[int, int]]] = {}
        self._node_owner: dict[Any, int] = {}
        self._arrivals: list[tuple[int, float]] = []  # (slot, norm) in backward order
        self._dying.reset()  # ReLU-like calls' outputs, their units read with the record
        self._cuts.reset()  # calls of trainable modules whose outputs had no history
        # calls that started after a backward pass reached the model and within the same step:
        # recomputations during backward (torch.utils.checkpoint), or forwards after backward
        self._late: set[int] = set()
        self._call_inputs: dict[int, CallInputs] = {}  # what each call took: see _hook_sent
        self._edge_calls: dict[Any, list[tuple[int, int, Any]]] = {}  # node -> [(nr, call, input)]
        self._sent_edges: dict[int, dict[Any, int]] = {}  # call -> {input: edges into it}
        # (call, input) -> [running sum, edges arrived] while a pass is under way
        self._sent_open: dict[tuple[int, Any], OpenSum] = {}
        self._sent: dict[int, list[float]] = {}  # call -> norm per backward pass
        self._passthrough: set[int] = set()  # calls that returned an input tensor itself
        self._slot_users: dict[int, list[int]] = {}  # input slot -> calls that took it
        # call -> the calls it shares an input tensor with (neither running inside the other)
        self._sharers: dict[int, set[int]] = {}
        self._call_outs: dict[int, list[Any]] = {}  # finished call -> its outputs' nodes
        self._values: dict[int, CallValues] = {}  # call -> weak refs to its inputs, outputs
        # data_ptr of an output with history -> (call, weak reference to its storage, shape);
        # call -> the call that took that memory as an input without history (detached)
        self._out_ptr: dict[int, tuple[int, weakref.ref, torch.Size]] = {}
        self._detached: dict[int, int] = {}
        self._notes.reset()

    def attach(self, sentinel: Any = None) -> None:
        # modules with a parameter that requires grad (their own or a child's), once
        self._trainable = {m for m in self.watched.names if any(p.requires_grad for p in m.parameters())}
        # under torch.compile the hooks run eagerly, outside the compiled graph (a graph
        # break at each module call: they read tensors' autograd state, which tracing lacks):
        # ModuleHooks registers them through patches.module_hook, which does that
        self._hooks = ModuleHooks(list(self.watched.names), self.watched.model,
                                  self._pre_hook, self._post_hook, sentinel)

    def _hook_tensor(self, t: torch.Tensor) -> int | None:
        """The slot recording ``t``'s gradient; hooks ``t`` the first time it is seen.

        A non-leaf tensor is hooked through its ``grad_fn`` (``Node.register_prehook``, which
        sees the gradient of every output of the node, each as it was before any later
        in-place change), a leaf through ``Tensor.register_hook``.
        """
        if not t.requires_grad:
            return None
        node = t.grad_fn
        key = (node, t.output_nr) if node is not None else (id(t), -1)
        slot = self._slots.get(key)
        if slot is None:
            if not (t.is_floating_point() or t.is_complex()):
                return None
            slot = len(self._shapes)
            self._slots[key] = slot
            self._shapes.append(tuple(t.shape))
            # the hooks are partials of module functions, not closures: fewer objects that
            # outlive the call (each step's survivors set off the garbage collector's runs)
            if node is None:
                self._slot_refs.append(t)  # keeps the id unique during the step
                self._tensor_handles.append(t.register_hook(
                    partial(_leaf_arrived, self.watched, self._arrivals, slot)))
            else:
                outputs = self._node_outputs.get(node)
                if outputs is None:
                    outputs = self._node_outputs[node] = []
                    self._tensor_handles.append(node.register_prehook(
                        partial(_node_arrived, self.watched, self._arrivals, outputs)))
                outputs.append((t.output_nr, slot))
        return slot

    def _pre_hook(self, module, args):
        watched = self.watched
        if self._skipped is not None:  # inside an evaluation call, or the next call
            if not (module is watched.model and torch.is_grad_enabled()):
                return
            self._skipped = None  # the evaluation call raised: its post-hook never ran
        if (module is watched.model and not self._stack and watched.backward_seen
                and not torch.is_grad_enabled() and graphnotes.reentrant_checkpoint() is None):
            self._skipped, self.evaluations = module, self.evaluations + 1
            return
        if (module is watched.model and self._stack and watched.backward_seen
                and not any(self._raw[i].module is module for i in self._stack)):
            # calls whose forward raised never ran their post-hook: torch.utils.checkpoint
            # stops a recomputation early by raising once it has what backward needs
            self._stack.clear()
        if not self._stack and module is watched.model:
            if watched.backward_seen or not watched.forwards:  # a new step: the last one's
                g, a = self._grads, self._arrivals  # notes read first (the record keeps them)
                self._light = not self._detail.begin(g.passes, g.raised, g.losses[1], a)
                hooks = self._hooks  # FSDP2's: left on (its parameters are hooked at each call)
                hooks.arm(not self._light or bool(self._swappable))  # type: ignore[union-attr]
                if watched.backward_seen:
                    self._reset()
            watched.forwards += 1
            self._grads.forward_started(watched.forwards)
        if self._swappable:
            self._follow_swaps(module)
        if self._light and module is not watched.model:  # a light step records the model's call
            return
        self.version += 1
        index = len(self._raw)
        ts = args if (len(args) == 1 and type(args[0]) is torch.Tensor) else list(_tensors(args))
        slots, producers = [], []
        keys, leaves = set(), []  # the inputs with history: (node, output number); leaves
        owners, known = self._node_owner, self._slots
        for t in ts:
            if t.requires_grad:
                node = t.grad_fn
                # a tensor already hooked (an earlier call's output): its slot, looked up here
                slot = known.get((node, t.output_nr) if node is not None else (id(t), -1))
                if slot is None:
                    slot = self._hook_tensor(t)
            else:
                slot = None
            if slot is None:
                if self._out_ptr and not t.requires_grad:
                    self._note_detached(t, index)
                continue
            slots.append(slot)
            if node is None:
                leaves.append(t)
                continue
            keys.add((node, t.output_nr))
            owner = owners.get(node)
            if owner is not None:
                producers.append(owner)
            else:
                producers.extend(producers_of(self._node_owner, node))
        if watched.backward_seen:
            self._late.add(index)
        if slots:
            self._call_inputs[index] = CallInputs(keys, leaves)
            # an input another call (not one this call runs inside) also took: the hook on
            # that tensor sees the sum of what both send, so each call's own share is hooked
            slot_users = self._slot_users
            for slot in slots:
                users = slot_users.get(slot)
                if users is None:
                    slot_users[slot] = [index]
                    continue
                others = [j for j in users if j not in self._stack]
                if others:
                    self._sharers.setdefault(index, set()).update(others)
                    for j in others:
                        if j not in self._sharers:
                            self._sharers[j] = set()
                            if j in self._call_outs:
                                self._hook_sent(j, self._call_outs.pop(j))
                        self._sharers[j].add(index)
                users.append(index)
        self._notes.begin(index, module, ts)
        self._raw.append(RawCall(module, self._stack[-1] if self._stack else None, slots, None,
                                 producers))
        self._values[index] = CallValues(  # graphnotes.refs, inline
            [weakref.ref(t) for t in ts
             if isinstance(t, torch.Tensor) and (t.is_floating_point() or t.is_complex())], [])
        self._stack.append(index)

    def _note_detached(self, t: torch.Tensor, index: int) -> None:
        """Input ``t`` of call ``index`` has no history: when it is the storage of an earlier
        call's output that has history (same shape), that output was detached."""
        hit = self._out_ptr.get(t.data_ptr())
        if hit is None:
            return
        call, storage, shape = hit
        # the same storage object (alive while any tensor holds it: not memory reused after
        # the output was freed) and the same shape
        if call != index and t.shape == shape and storage() is t.untyped_storage():
            self._detached.setdefault(call, index)

    def shared_total(self, index: int) -> int:
        """How many calls' gradients the ``grad_in`` of call ``index`` adds up: 1 when it is
        this call's own (its edges were hooked, or no other call took its inputs), else the
        number of calls sharing its input tensor, whose whole gradient it then is."""
        if index in self._sent_edges or index in self._passthrough:
            return 1
        return len(self._sharers.get(index, ())) + 1

    def _hook_sent(self, index: int, roots: list[Any]) -> None:
        """Hook the edges by which call ``index`` sends gradient to its inputs (when another
        call takes one of the same input tensors): walking from its outputs' nodes ``roots``
        down to its input tensors' nodes, each node with an input among them gets a post-hook
        (``Node.register_hook``: it sees ``grad_inputs``, what the node sends to each of its
        inputs).  The walk is bounded; a call whose inputs it does not reach keeps the
        gradient at its input tensors (the total over all their uses)."""
        keys, leaves = self._call_inputs.pop(index)
        leaf_ids = {id(t) for t in leaves}
        edges: list[tuple[Any, int, Any]] = []  # (node, input number, the input it feeds)
        seen, todo = set(roots), list(roots)
        while todo:
            if len(seen) > _SENT_LIMIT:
                return
            n = todo.pop()
            for k, (c, nr) in enumerate(children(n)):
                if c is None:
                    continue
                leaf = leaf_tensor(c)
                if (c, nr) in keys:
                    edges.append((n, k, (c, nr)))
                elif leaf_ids and id(leaf) in leaf_ids:
                    edges.append((n, k, id(leaf)))
                elif c not in seen and leaf is None:
                    seen.add(c)
                    todo.append(c)
        if not edges:
            return
        counts: dict[Any, int] = {}
        for _, _, target in edges:
            counts[target] = counts.get(target, 0) + 1
        self._sent_edges[index] = counts
        for n, k, target in edges:
            entries = self._edge_calls.get(n)
            if entries is None:
                entries = self._edge_calls[n] = []
                self._tensor_handles.append(n.register_hook(self._sent_hook(entries)))
            entries.append((k, index, target))

    def _sent_hook(self, entries: list[tuple[int, int, Any]]):
        def hook(grad_inputs, grad_outputs):
            for k, call, target in entries:
                try:
                    self._arrive(call, target, grad_inputs[k])
                except Exception:  # noqa: BLE001 (never break the user's backward)
                    self._sent_edges.pop(call, None)  # the call keeps its inputs' total

        return hook

    def _arrive(self, call: int, target: Any, g: torch.Tensor | None) -> None:
        """One edge of ``call`` into its input ``target`` delivered ``g``; when every edge
        into that input has, the norm of their sum joins the call's record."""
        counts = self._sent_edges.get(call)
        if counts is None:
            return
        if counts[target] == 1:  # one edge: its norm, no sum to keep
            if g is not None:
                self._sent.setdefault(call, []).append(_norm(g))
            return
        acc = self._sent_open.get((call, target))
        if acc is None:
            acc = self._sent_open[(call, target)] = OpenSum()
        if g is not None:
            g = g.detach()
            acc.total = g.clone() if acc.total is None else acc.total + g
        acc.arrived += 1
        if acc.arrived == counts[target]:  # every edge into it arrived in this pass
            self._close_sent((call, target))

    def _close_sent(self, key: tuple[int, Any]) -> None:
        total = self._sent_open.pop(key).total
        if total is not None:
            self._sent.setdefault(key[0], []).append(_norm(total))

    def _post_hook(self, module, args, output):
        if self._skipped is not None:
            if module is self._skipped:
                self._skipped = None
            return
        stack = self._stack
        if not stack or (self._light and module is not self.watched.model):
            return
        index = stack.pop()
        ts = (output,) if type(output) is torch.Tensor else list(_tensors(output))
        self._notes.end(index, module, ts)
        # one pass over the outputs: their slots (hooked), the nodes of those with history,
        # weak references to the floating ones, and whether any is floating / has history
        slots, roots, refs = [], [], []
        owners, out_ptr, known = self._node_owner, self._out_ptr, self._slots
        for t in ts:
            if not (t.is_floating_point() or t.is_complex()):
                continue
            refs.append(weakref.ref(t))
            if not t.requires_grad:
                continue
            node, nr = t.grad_fn, t.output_nr
            slot = known.get((node, nr) if node is not None else (id(t), -1))
            if slot is None:
                slot = self._hook_tensor(t)
            slots.append(slot)
            if node is not None:
                roots.append((node, nr))
                if node not in owners:
                    owners[node] = index  # the innermost module first
                    out_ptr[t.data_ptr()] = (index, weakref.ref(t.untyped_storage()), t.shape)
        raw = self._raw
        r = raw[index]
        raw[index] = RawCall(r.module, r.parent, r.ins, slots, r.producers)
        self._values[index].outs.extend(refs)
        if not stack:
            self._on_outer_return(index)
        inputs = self._call_inputs.get(index)
        if inputs is not None:
            keys = inputs.keys
            for key in roots:
                if key in keys:
                    self._passthrough.add(index)  # returns its input itself (Dropout(p=0))
                    del self._call_inputs[index]
                    break
            else:
                if index in self._sharers:
                    self._hook_sent(index, [n for n, _ in roots])
                else:
                    self._call_outs[index] = [n for n, _ in roots]
        if isinstance(module, DYING):
            self._dying.note(index, module, output, raw)
        if refs and not slots and module in self._trainable:
            self._cuts.note(index)  # trainable, yet no autograd history

    def _follow_swaps(self, module: Any) -> None:
        """Hook the parameters FSDP2 put on ``module`` for this forward (its pre-forward hook,
        registered with ``prepend=True``, has run): their gradients count for the parameters
        registered under the same names."""
        for pname, p in self._swappable.get(module, ()):
            live = getattr(module, pname, None)
            if (not isinstance(live, torch.Tensor) or live is p or not live.requires_grad
                    or self._swapped.get(id(live)) is live):
                continue
            self._swapped[id(live)] = live  # a reference keeps the id unique
            self._grads.hook_param(p, live)
