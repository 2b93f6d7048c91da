"""Record the user's own training step: the gradient through every module and parameter.

:func:`watch` puts light hooks on a model while the user runs an ordinary forward and backward
pass (``loss.backward()``, an optimizer, anything): forward pre-hooks and hooks on every module
(``torch.nn.Module.register_forward_pre_hook`` / ``register_forward_hook``) note the order in
which modules ran and hang a tensor hook (``torch.Tensor.register_hook``) on each tensor that
enters or leaves a module; a tensor hook on every parameter sees the gradient this backward
pass computed for it, before it is added to ``.grad``. Each hook stores one norm (a float);
the tables are assembled once, when the record is asked for them. Leaving the
``with`` block (or calling :meth:`GradWatch.remove`) removes every hook.

See https://pytorch.org/docs/stable/notes/autograd.html#backward-hooks-execution for when
tensor hooks run, and why a hook registered before an in-place operation sees the gradient of
the value before it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import torch

__all__ = ["GradWatch", "ModuleRecord", "ParamRecord", "watch"]

# activations whose units can die: the unit's output is exactly 0 for every example
_DYING = (torch.nn.ReLU, torch.nn.ReLU6)
_WALK_LIMIT = 64  # autograd nodes visited per module input to find the module that produced it
ROOT_NAME = "(model)"


def _norm(g: torch.Tensor) -> float:
    """The 2-norm of a gradient as a float: 0.0 only if every entry is 0, NaN/Inf only if one is.

    The norm is taken in the gradient's dtype (fast); the rare results that could be wrong
    there are checked on the entries: 0 (the squares of entries below about 1e-19 underflow in
    float32) and Inf (squares above about 1e19 overflow) are redone in float64. Sparse COO
    gradients (``nn.Embedding(sparse=True)``) are coalesced first: elementwise functions such as
    ``isfinite`` are not implemented for them, their values are.
    """
    if g.is_sparse:
        g = g.coalesce().values()
    elif g.layout != torch.strided:
        g = g.to_dense()
    n = torch.linalg.vector_norm(g).item()
    if n == 0.0 or n == math.inf:
        if n == 0.0 and not bool(g.any()):
            return 0.0
        if n == math.inf and not bool(torch.isfinite(g).all()):
            return math.inf
        wide = g.to(torch.complex128 if g.is_complex() else torch.float64)
        n = torch.linalg.vector_norm(wide).item()
    return n


def _tensors(value: Any) -> Iterable[torch.Tensor]:
    """Every tensor in nested tuples, lists and dicts (LSTM returns ``(out, (h, c))``)."""
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from _tensors(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _tensors(v)


def _combine(norms: list[float]) -> float | None:
    """The norm of several tensors taken together: sqrt of the sum of squared norms."""
    if not norms:
        return None
    if any(math.isnan(n) for n in norms):
        return math.nan
    return math.sqrt(sum(n * n for n in norms))


def _state(norm: float | None) -> str:
    if norm is None:
        return "none"
    if not math.isfinite(norm):
        return "nonfinite"
    return "zero" if norm == 0.0 else "ok"


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
        Norm of the gradient with respect to the module's inputs (what left it toward the
        inputs). For an input also used elsewhere (a skip connection) it is that tensor's whole
        gradient. ``None`` if no input requires grad or nothing arrived.
    param_norm : float or None
        Norm of this step's gradients of the module's own parameters (not its children's).
    dead_units : tuple of int or None
        For ReLU-like modules: ``(dead, units)``, the units (dimension 1: features of a
        ``Linear``, channels of a ``Conv``) whose output was 0 for every example.
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
        Norm of the gradient this step's backward pass computed for it (summed over passes if
        several ran), before it was added to ``.grad``; ``None`` if no gradient reached it.
    held_before : float or None
        Norm of what ``.grad`` already held when that gradient arrived (``None``: ``.grad``
        was None). Nonzero means ``.grad`` now holds a sum over several backward passes.
    sparse : bool
        The gradient arrived as a sparse tensor (``nn.Embedding(sparse=True)``).
    module_ran : bool
        Whether the owning module was called in the forward pass.
    """

    name: str
    module: str
    shape: tuple[int, ...]
    requires_grad: bool
    grad: float | None = None
    held_before: float | None = None
    sparse: bool = False
    module_ran: bool = False

    @property
    def state(self) -> str:
        """``"ok"``, ``"zero"``, ``"nonfinite"`` or ``"none"``."""
        return _state(self.grad)


class GradWatch:
    """The hooks :func:`watch` put on a model, and the record of the last step they saw.

    Use it as a context manager (``with gradarg.watch(model) as w:``) or keep it and call
    :meth:`remove`. After a backward pass, ask :meth:`summary`, :meth:`table`, :meth:`plot`,
    :meth:`why_no_grad` or :meth:`draw`.

    Attributes
    ----------
    model : torch.nn.Module
        The watched model.
    backward_passes : int
        Number of backward passes that reached the model during the recorded step.
    """

    def __init__(self, model: torch.nn.Module):
        if not isinstance(model, torch.nn.Module):
            raise TypeError(
                f"watch() takes a torch.nn.Module, got {type(model).__name__}; wrap a function "
                f"in a module, or use gradarg.trace_backward(loss) for a bare graph"
            )
        self.model = model
        self._names = {m: (n or ROOT_NAME) for n, m in model.named_modules()}
        self._owner = {}
        for mname, m in model.named_modules():
            for pname, p in m.named_parameters(recurse=False):
                full = f"{mname}.{pname}" if mname else pname
                self._owner.setdefault(p, (full, mname or ROOT_NAME))
        self._module_handles: list[Any] = []
        self._param_handles: list[Any] = []
        self._tensor_handles: list[Any] = []
        self._active = False
        self._reset()
        self._attach()

    # -- hooks --------------------------------------------------------------------------------
    def _reset(self) -> None:
        for h in getattr(self, "_tensor_handles", ()):
            h.remove()
        self._tensor_handles = []
        # one entry per module call: [module, parent, in slots, out slots, producers]
        self._raw: list[list[Any]] = []
        self._stack: list[int] = []
        self._slots: dict[tuple[int, int], int] = {}  # (id, version) of a hooked tensor -> slot
        self._slot_refs: list[Any] = []  # keeps hooked leaf tensors' ids unique
        self._shapes: list[tuple[int, ...]] = []
        self._node_outputs: dict[Any, list[tuple[int, int]]] = {}
        self._node_owner: dict[Any, int] = {}
        self._arrivals: list[tuple[int, float]] = []  # (slot, norm) in backward order
        self._param_got: list[tuple[Any, float, float | None, bool]] = []
        self._dead: dict[int, tuple[torch.Tensor, int]] = {}
        self._passes = 0
        self._backward_seen = False
        self._cache: tuple | None = None

    def _attach(self) -> None:
        for module in self._names:
            self._module_handles.append(module.register_forward_pre_hook(self._pre_hook))
            self._module_handles.append(module.register_forward_hook(self._post_hook))
        for p in self._owner:
            if p.requires_grad:
                self._param_handles.append(p.register_hook(self._param_hook(p)))
        self._active = True

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
            arrivals = self._arrivals
            if node is None:
                self._slot_refs.append(t)  # keeps the id unique during the step

                def hook(g, slot=slot):
                    self._backward_seen = True
                    arrivals.append((slot, _norm(g)))

                self._tensor_handles.append(t.register_hook(hook))
            else:
                outputs = self._node_outputs.get(node)
                if outputs is None:
                    outputs = self._node_outputs[node] = []

                    def prehook(grads, outputs=outputs):
                        self._backward_seen = True
                        for nr, slot in outputs:
                            g = grads[nr]
                            if g is not None:
                                arrivals.append((slot, _norm(g)))

                    self._tensor_handles.append(node.register_prehook(prehook))
                outputs.append((t.output_nr, slot))
        return slot

    def _pre_hook(self, module, args):
        if self._backward_seen and not self._stack and module is self.model:
            self._reset()  # a new step: the record keeps the last one
        self._cache = None
        index = len(self._raw)
        ts = args if (len(args) == 1 and type(args[0]) is torch.Tensor) else _tensors(args)
        slots, producers = [], []
        for t in ts:
            slot = self._hook_tensor(t)
            if slot is not None:
                slots.append(slot)
                node = t.grad_fn
                owner = self._node_owner.get(node)
                if owner is not None:
                    producers.append(owner)
                elif node is not None:
                    producers.extend(self._producers(node))
        self._raw.append([module, self._stack[-1] if self._stack else None, slots, None,
                          producers])
        self._stack.append(index)

    def _producers(self, node: Any) -> list[int]:
        """Module calls whose outputs reach ``node`` through functional operations."""
        found, seen, todo = [], {node}, [node]
        while todo and len(seen) <= _WALK_LIMIT:
            n = todo.pop()
            owner = self._node_owner.get(n)
            if owner is not None:
                found.append(owner)
                continue
            for child, _ in n.next_functions:
                if child is not None and child not in seen and not hasattr(child, "variable"):
                    seen.add(child)
                    todo.append(child)
        return found

    def _post_hook(self, module, args, output):
        if not self._stack:
            return
        index = self._stack.pop()
        raw = self._raw[index]
        ts = (output,) if type(output) is torch.Tensor else _tensors(output)
        slots = []
        owners = self._node_owner
        for t in ts:
            slot = self._hook_tensor(t)
            if slot is not None:
                slots.append(slot)
                node = t.grad_fn
                if node is not None and node not in owners:
                    owners[node] = index  # the innermost module first
        raw[3] = slots
        if isinstance(module, _DYING) and type(output) is torch.Tensor and output.dim() >= 2:
            out = output.detach()
            peak = out.amax(0) if out.dim() == 2 else out.amax(
                dim=[d for d in range(out.dim()) if d != 1])
            self._dead[index] = (peak, out.shape[1])  # ReLU outputs are >= 0

    def _param_hook(self, p: torch.Tensor):
        def hook(g):
            self._backward_seen = True
            held = p.grad
            self._param_got.append((p, _norm(g), None if held is None else _norm(held),
                                    g.is_sparse))

        return hook

    # -- life cycle ---------------------------------------------------------------------------
    def remove(self) -> None:
        """Remove every hook this watch put on the model, its parameters and tensors.

        The record stays readable. Calling it twice is harmless.

        Examples
        --------
        >>> import torch
        >>> net = torch.nn.Linear(3, 1)
        >>> w = watch(net)
        >>> w.remove()
        >>> net._forward_hooks, net._forward_pre_hooks
        (OrderedDict(), OrderedDict())
        """
        if self._active:
            self._finish()
        for h in self._module_handles + self._param_handles + self._tensor_handles:
            h.remove()
        self._module_handles, self._param_handles, self._tensor_handles = [], [], []
        self._slot_refs, self._slots = [], {}
        self._node_owner, self._node_outputs = {}, {}
        self._active = False

    def __enter__(self) -> GradWatch:  # noqa: PYI034 (a final class in practice)
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()

    # -- the record ---------------------------------------------------------------------------
    def _finish(self) -> tuple[list[ModuleRecord], dict[str, ParamRecord]]:
        if self._cache is not None and self._cache[2] == (len(self._arrivals),
                                                          len(self._param_got)):
            return self._cache[:2]
        by_slot: dict[int, list[float]] = {}
        rank: dict[int, int] = {}
        for r, (slot, value) in enumerate(self._arrivals):
            by_slot.setdefault(slot, []).append(value)
            rank.setdefault(slot, r)
        passes = max((len(v) for v in by_slot.values()), default=0)
        slot_norm = {s: _combine(v) for s, v in by_slot.items()}
        shapes = self._shapes
        calls: list[ModuleRecord] = []
        for index, (module, parent, ins, outs, producers) in enumerate(self._raw):
            outs = outs or []
            depth = 0 if parent is None else calls[parent].depth + 1
            ranks = [rank[s] for s in outs if s in rank]
            rec = ModuleRecord(
                index=index, name=self._names.get(module, type(module).__name__),
                kind=type(module).__name__, parent=parent, depth=depth,
                out_shape=shapes[outs[0]] if outs and shapes else None,
                in_shape=shapes[ins[0]] if ins and shapes else None,
                grad_out=_combine([slot_norm[s] for s in outs if s in slot_norm]),
                grad_in=_combine([slot_norm[s] for s in ins if s in slot_norm]),
                producers=tuple(dict.fromkeys(p for p in producers if p != index)),
                backward_rank=min(ranks) if ranks else None)
            if index in self._dead:
                peak, units = self._dead[index]
                rec.dead_units = (int((peak == 0).sum()), units)
            if parent is not None:
                calls[parent].children.append(index)
            calls.append(rec)
        grads: dict[str, list[float]] = {}
        held: dict[str, float | None] = {}
        sparse: dict[str, bool] = {}
        for p, n, h, is_sparse in self._param_got:
            name = self._owner[p][0]
            grads.setdefault(name, []).append(n)
            held.setdefault(name, h)
            sparse[name] = sparse.get(name, False) or is_sparse
        ran_names = {c.name for c in calls}
        first_call: dict[str, int] = {}
        for rec in calls:
            first_call.setdefault(rec.name, rec.index)
        params: dict[str, ParamRecord] = {}
        own: dict[int, list[float]] = {}
        for p, (name, mname) in self._owner.items():
            g = grads.get(name)
            total = None if g is None else _combine(g)
            params[name] = ParamRecord(
                name=name, module=mname, shape=tuple(p.shape), requires_grad=p.requires_grad,
                grad=total, held_before=held.get(name), sparse=sparse.get(name, False),
                module_ran=mname in ran_names)
            if mname in first_call:
                calls[first_call[mname]].params.append(name)
                if total is not None:
                    own.setdefault(first_call[mname], []).append(total)
        for rec in calls:
            rec.param_norm = _combine(own.get(rec.index, []))
        self._passes = passes
        self._cache = (calls, params, (len(self._arrivals), len(self._param_got)))
        return calls, params

    @property
    def modules(self) -> list[ModuleRecord]:
        """Every module call of the recorded step, in forward order."""
        return self._finish()[0]

    @property
    def parameters(self) -> dict[str, ParamRecord]:
        """Every parameter of the model, by name, with what it received."""
        return self._finish()[1]

    @property
    def backward_passes(self) -> int:
        self._finish()
        return self._passes

    def layers(self) -> list[ModuleRecord]:
        """The innermost module calls (no module ran inside them), in forward order."""
        calls = self.modules
        leaves = [c for c in calls if not c.children]
        return leaves if leaves else calls[:1]

    # -- questions ----------------------------------------------------------------------------
    def first_nonfinite(self) -> ModuleRecord | None:
        """The first module, in backward order, that received a finite gradient but sent NaN/Inf.

        Its gradient with respect to its inputs, or of its own parameters, is not finite while
        the gradient that arrived at its outputs is. ``None`` if there is no such module.
        """
        return self._first("nonfinite")

    def first_zero(self) -> ModuleRecord | None:
        """The first module, in backward order, that received a nonzero gradient and sent zero."""
        return self._first("zero")

    def _first(self, state: str) -> ModuleRecord | None:
        ran = [c for c in self.modules if c.backward_rank is not None]
        for c in sorted(ran, key=lambda c: (c.backward_rank, -c.depth)):
            if _state(c.grad_out) != "ok":
                continue
            if _state(c.grad_in) == state or (state == "nonfinite" and
                                              _state(c.param_norm) == "nonfinite"):
                return c
        return None

    def why_no_grad(self, param: str | torch.Tensor) -> str:
        """Why a parameter's gradient was None, zero or NaN in the recorded step.

        Parameters
        ----------
        param : str or torch.Tensor
            The parameter's name (as in ``model.named_parameters()``) or the parameter itself.

        Returns
        -------
        str
            One or two sentences built from what the hooks saw; where the record cannot decide
            between causes it says so (``gradarg.why_no_grad(loss, param)`` reads the graph).

        Raises
        ------
        KeyError
            ``param`` is not a parameter of the watched model.

        Examples
        --------
        >>> import torch
        >>> torch.manual_seed(0) and None
        >>> net = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Linear(2, 1))
        >>> with watch(net) as w:
        ...     net[0](torch.randn(4, 2)).sum().backward()   # net[1] skipped
        >>> w.why_no_grad("1.weight")
        "no gradient reached 1.weight: module '1' (Linear) was never called ..."
        """
        name = self._param_name(param)
        r = self.parameters[name]
        if not r.requires_grad:
            return (f"{name} has requires_grad=False (frozen): backward computes no gradient "
                    f"for it")
        if r.grad is None:
            if not self._backward_seen:
                return (f"no backward pass reached the model while it was watched, so nothing "
                        f"reached {name}")
            if not r.module_ran:
                kind = type(dict(self.model.named_modules())[
                    "" if r.module == ROOT_NAME else r.module]).__name__
                return (f"no gradient reached {name}: module '{r.module}' ({kind}) was never "
                        f"called in the forward pass, so the parameter is probably unused by "
                        f"the model's forward (a parent could still read it directly)")
            return (f"no gradient reached {name}, although module '{r.module}' ran: either "
                    f"the module's forward does not use it, or its path to the loss was cut "
                    f"(detach(), .data, torch.no_grad(), a NumPy round trip); the record cannot "
                    f"tell which: gradarg.why_no_grad(loss, param) reads the graph")
        text = self._param_state_text(name, r)
        if r.held_before:
            text += (f"; .grad already held a gradient of norm {_f(r.held_before)} when this "
                     f"step's arrived, so .grad now holds their sum (zero_grad() not called "
                     f"before this backward?)")
        return text

    def _param_state_text(self, name: str, r: ParamRecord) -> str:
        from ..show.render import fmt

        state = r.state
        if state == "ok":
            return f"{name} received a gradient of norm {fmt(r.grad)}"
        calls = [c for c in self.modules if c.name == r.module]
        where = ""
        if calls:
            c = calls[0]
            where = (f"; the gradient arriving at module '{c.name}' had norm "
                     f"{_f(c.grad_out)}")
        if state == "nonfinite":
            first = self.first_nonfinite()
            if first is not None:
                where += f"; the first module to send NaN/Inf was '{first.name}' ({first.kind})"
            return f"{name} received a gradient holding NaN or Inf{where}"
        dead = [c for c in self.modules if c.dead_units and c.dead_units[0]]
        text = f"{name} received a gradient that is exactly zero{where}"
        if dead:
            c = dead[0]
            text += (f"; module '{c.name}' ({c.kind}) had {c.dead_units[0]} of "
                     f"{c.dead_units[1]} units at 0 for every example of the batch")
        return text

    def _param_name(self, param: str | torch.Tensor) -> str:
        if isinstance(param, torch.Tensor):
            for p, (name, _) in self._owner.items():
                if p is param:
                    return name
            raise KeyError("that tensor is not a parameter of the watched model")
        if param not in self.parameters:
            known = ", ".join(list(self.parameters)[:8])
            raise KeyError(f"no parameter named {param!r} in the watched model; known: "
                           f"{known}...")
        return param

    def problems(self, *, factor: float = 1e3, dead_fraction: float = 0.5) -> list[str]:
        """Each thing wrong with the recorded step, one phrase each (empty if none).

        Parameters
        ----------
        factor : float
            Vanishing: the gradient arriving at the first layer is at least ``factor`` times
            smaller than at the last; exploding: at least ``factor`` times larger. When one
            innermost module accounts for at least half of that change (and for at least an
            order of magnitude by itself), the phrase names it with the norms at its output and
            input: a sudden drop inside one module (a loss a layer norm makes constant, say) is
            not the gradual shrinking of a deep stack.
        dead_fraction : float
            Report a ReLU-like module when at least this fraction of its units is dead.
        """
        out = []
        if not self._backward_seen:
            return ["no backward pass reached the model"]
        first = self.first_nonfinite()
        bad = [n for n, r in self.parameters.items() if r.state == "nonfinite"]
        if first is not None or bad:
            where = f" first sent by '{first.name}' ({first.kind})" if first else ""
            out.append(f"non-finite gradient{where}: {len(bad)} parameter(s) got NaN/Inf")
        none = [n for n, r in self.parameters.items() if r.requires_grad and r.grad is None]
        if none:
            shown = ", ".join(none[:3]) + (", ..." if len(none) > 3 else "")
            out.append(f"no gradient for {len(none)} parameter(s): {shown}")
        layers = self.layers()
        flow = [c for c in layers if c.params and c.grad_out is not None and
                math.isfinite(c.grad_out)]
        if len(flow) >= 2 and flow[-1].grad_out > 0:
            ratio = flow[0].grad_out / flow[-1].grad_out
            # the modules the ratio spans: the gradient from flow[-1]'s output to flow[0]'s
            span = [c for c in layers if flow[0].index < c.index <= flow[-1].index]
            if ratio == 0:
                out.append(f"vanishing gradient: exactly zero at '{flow[0].name}' although "
                           f"'{flow[-1].name}' received {_f(flow[-1].grad_out)}")
            elif ratio <= 1 / factor:
                out.append(f"vanishing gradient: {_orders(ratio)} orders of magnitude smaller "
                           f"at '{flow[0].name}' than at '{flow[-1].name}'"
                           f"{_sharpest(ratio, span)}")
            elif ratio >= factor:
                out.append(f"exploding gradient: {_orders(ratio)} orders of magnitude larger "
                           f"at '{flow[0].name}' than at '{flow[-1].name}'"
                           f"{_sharpest(ratio, span)}")
        for c in self.modules:
            if c.dead_units and c.dead_units[0] >= dead_fraction * c.dead_units[1]:
                out.append(f"dead units: '{c.name}' has {c.dead_units[0]} of "
                           f"{c.dead_units[1]} units at 0 for every example of the batch")
                break
        zero = [n for n, r in self.parameters.items() if r.state == "zero"]
        if zero:
            first_zero = self.first_zero()
            where = (f" (the gradient first became all zero at '{first_zero.name}' "
                     f"({first_zero.kind}))" if first_zero else "")
            out.append(f"all-zero gradient for {len(zero)} parameter(s): "
                       f"{', '.join(zero[:2])}{', ...' if len(zero) > 2 else ''}{where}")
        held = [n for n, r in self.parameters.items() if r.held_before]
        if held:
            out.append(f".grad already held a gradient for {len(held)} parameter(s) before "
                       f"this backward (zero_grad() not called?)")
        return out

    def summary(self, **kwargs: Any) -> str:
        """One line: what is wrong with the recorded step's gradient flow, or that nothing is.

        Keyword arguments go to :meth:`problems`.
        """
        problems = self.problems(**kwargs)
        if problems:
            return "; ".join(problems)
        flow = [c.grad_out for c in self.layers() if c.params and c.grad_out]
        spread = ""
        if len(flow) >= 2:
            spread = (f", norms at the layers within {_orders(max(flow) / min(flow))} "
                      f"orders of magnitude")
        return f"ok: every parameter got a finite, nonzero gradient{spread}"

    def rows(self) -> list[dict[str, Any]]:
        """The gradient-flow table as dicts, one per innermost module call in forward order.

        Keys: ``module``, ``type``, ``shape`` (output), ``grad_out`` (norm of the gradient
        arriving at the output), ``grad_in`` (norm of the gradient with respect to the input),
        ``params`` (norm of the module's parameter gradients), ``flags``.
        """
        rows = []
        for c in self.layers():
            flags = []
            for what, v in (("out", c.grad_out), ("in", c.grad_in), ("params", c.param_norm)):
                s = _state(v)
                if s in ("zero", "nonfinite"):
                    flags.append(f"{what} {'0' if s == 'zero' else 'NaN/Inf'}")
            missing = [p for p in c.params if self.parameters[p].requires_grad and
                       self.parameters[p].grad is None]
            if missing:
                flags.append(f"no grad: {', '.join(p.rsplit('.', 1)[-1] for p in missing)}")
            if c.dead_units and c.dead_units[0]:
                flags.append(f"dead {c.dead_units[0]}/{c.dead_units[1]}")
            rows.append({"module": c.name, "type": c.kind,
                         "shape": "×".join(map(str, c.out_shape)) if c.out_shape else "",
                         "grad_out": c.grad_out, "grad_in": c.grad_in,
                         "params": c.param_norm, "flags": "; ".join(flags)})
        return rows

    def table(self) -> str:
        """The gradient-flow table as aligned text (innermost modules in forward order)."""
        head = ["module", "type", "shape", "‖grad out‖", "‖grad in‖", "‖param grads‖", "flags"]
        body = [[r["module"], r["type"], r["shape"], _f(r["grad_out"]), _f(r["grad_in"]),
                 _f(r["params"]), r["flags"]] for r in self.rows()]
        widths = [max(len(str(x)) for x in col) for col in zip(head, *body, strict=True)]
        lines = ["  ".join(str(x).ljust(w) for x, w in zip(row, widths, strict=True)).rstrip()
                 for row in [head, *body]]
        return "\n".join(lines)

    def plot(self, ax: Any = None, *, title: str | None = None) -> Any:
        """Gradient norms per module in forward order, log scale, zero and NaN/Inf marked.

        Draws, for each innermost module, the norm of the gradient arriving at its output
        (line) and of its parameters' gradients (bars). A zero norm cannot sit on a log axis:
        it is drawn as a triangle on the bottom edge; NaN/Inf as a cross on the top edge.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw; a new figure if omitted.
        title : str, optional
            Defaults to :meth:`summary`.

        Returns
        -------
        matplotlib.figure.Figure

        Raises
        ------
        ImportError
            matplotlib is not installed (``pip install gradarg[plot]``).
        """
        import matplotlib.pyplot as plt

        rows = self.rows()
        if ax is None:
            fig, ax = plt.subplots(figsize=(max(6.0, 0.32 * len(rows) + 2), 3.6),
                                   layout="constrained")
        else:
            fig = ax.figure
        xs = list(range(len(rows)))
        finite = [v for r in rows for v in (r["grad_out"], r["params"])
                  if v is not None and math.isfinite(v) and v > 0]
        lo = min(finite) / 10 if finite else 1e-12
        hi = max(finite) * 10 if finite else 1.0
        ax.set_yscale("log")
        ax.set_ylim(lo, hi)
        pb = [(x, r["params"]) for x, r in zip(xs, rows, strict=True)
              if r["params"] is not None and math.isfinite(r["params"]) and r["params"] > 0]
        if pb:
            ax.bar([x for x, _ in pb], [v for _, v in pb], bottom=lo, color="#74c0fc",
                   alpha=0.7, label="‖param grads‖")
        line = [(x, r["grad_out"]) for x, r in zip(xs, rows, strict=True)
                if r["grad_out"] is not None and math.isfinite(r["grad_out"]) and
                r["grad_out"] > 0]
        if line:
            ax.plot([x for x, _ in line], [v for _, v in line], "o-", color="#1c7ed6",
                    label="‖grad at output‖")
        zero = [x for x, r in zip(xs, rows, strict=True)
                if _state(r["grad_out"]) == "zero" or _state(r["params"]) == "zero"]
        bad = [x for x, r in zip(xs, rows, strict=True)
               if _state(r["grad_out"]) == "nonfinite" or _state(r["params"]) == "nonfinite"]
        if zero:
            ax.plot(zero, [lo] * len(zero), "v", color="#e8590c", markersize=10,
                    clip_on=False, label="zero")
        if bad:
            ax.plot(bad, [hi] * len(bad), "X", color="#e03131", markersize=10,
                    clip_on=False, label="NaN/Inf")
        ax.set_xticks(xs, [r["module"] for r in rows], rotation=60, ha="right",
                      fontsize=8 if len(rows) > 16 else 9)
        ax.set_xlabel("module (forward order: input → output)")
        ax.set_ylabel("gradient norm")
        ax.set_title(title if title is not None else self.summary(), fontsize=9, loc="left")
        ax.legend(fontsize=8, loc="best")
        ax.grid(True, which="major", axis="y", alpha=0.3)
        return fig

    def draw(self, **kwargs: Any):
        """The module-level drawing; see :func:`gradarg.draw_modules` for the options."""
        from .modules import draw_modules

        return draw_modules(self, **kwargs)

    def __repr__(self) -> str:
        if not self._raw:
            return f"GradWatch({type(self.model).__name__}): nothing recorded yet"
        return f"{self.summary()}\n{self.table()}"


def _f(v: float | None) -> str:
    from ..show.render import fmt

    if v is None:
        return "—"
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Inf"
    return fmt(v, digits=3)


def _sharpest(ratio: float, span: list[ModuleRecord]) -> str:
    """``", most of it across 'name' (...)"`` when one module of ``span`` (the innermost modules
    between the first and last layer) accounts for at least half of the change ``ratio`` (first
    layer / last layer) and for at least one order of magnitude by itself; else ``""``. Read
    from the recorded norms at the module's output and input, nothing else."""
    total = math.log10(ratio)
    best, best_change = None, 0.0
    for c in span:
        if not (c.grad_out and c.grad_in) or not (
                math.isfinite(c.grad_out) and math.isfinite(c.grad_in)):
            continue
        change = math.log10(c.grad_in / c.grad_out)  # < 0: shrank on its way through
        if change * total > 0 and abs(change) > abs(best_change):
            best, best_change = c, change
    if best is None or abs(best_change) < max(1.0, abs(total) / 2):
        return ""
    return (f", most of it across '{best.name}' ({best.kind}: {_f(best.grad_out)} at its "
            f"output, {_f(best.grad_in)} at its input)")


def _orders(ratio: float) -> str:
    return f"{abs(math.log10(ratio)):.1f}"


def watch(model: torch.nn.Module) -> GradWatch:
    """Record the gradient through every module and parameter of ``model`` during your own step.

    Hooks go on at once; run your forward and backward passes as usual, then leave the
    ``with`` block (or call :meth:`GradWatch.remove`): no hook is left behind. The record keeps
    floats and shapes only, never the graph or your tensors. A forward pass of the model that
    starts after a backward pass starts a new record: the watch holds the last step.

    Parameters
    ----------
    model : torch.nn.Module
        The model; every submodule and parameter is watched.

    Returns
    -------
    GradWatch
        The hooks and the record: :meth:`~GradWatch.summary`, :meth:`~GradWatch.table`,
        :meth:`~GradWatch.plot`, :meth:`~GradWatch.why_no_grad`, :meth:`~GradWatch.draw`.

    Raises
    ------
    TypeError
        ``model`` is not a ``torch.nn.Module``.

    Notes
    -----
    Norms are accumulated in float64, so a gradient counts as zero only if every entry is
    exactly zero. Sparse gradients (``nn.Embedding(sparse=True)``) are measured on their
    coalesced values. A module that ran several times (a shared layer) has one record per call;
    its parameters' gradients are the sum over the calls, shown at the first. Until the block
    ends (or the next step starts) the record holds the step's autograd nodes, as the loss
    does; forward passes with grad enabled and no backward (an evaluation loop without
    ``torch.no_grad()``) keep their graphs until then. Under reentrant ``torch.utils.checkpoint`` the
    checkpointed modules appear twice: once from the forward (no gradient arrives there) and
    once from their recomputation during the backward. Not tried: modules compiled with
    ``torch.compile``.

    Examples
    --------
    >>> import torch
    >>> torch.manual_seed(0) and None
    >>> net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(),
    ...                           torch.nn.Linear(8, 1))
    >>> with watch(net) as w:
    ...     loss = net(torch.randn(16, 4)).pow(2).mean()
    ...     loss.backward()
    >>> [r["module"] for r in w.rows()]
    ['0', '1', '2']
    >>> w.summary()
    'ok: every parameter got a finite, nonzero gradient, norms ...'
    >>> net._forward_hooks or net[0].weight._backward_hooks  # nothing left behind
    OrderedDict()
    """
    return GradWatch(model)
