"""Record what flows through a backward pass: the upstream gradient (cotangent) at every node.

:func:`trace_backward` runs one real backward pass, ``output.backward(gradient=v, inputs=...)``
(or ``torch.autograd.grad`` with ``use_grad=True``), with hooks on every node of the output's
graph (``torch.autograd.graph.Node.register_prehook`` and ``register_hook``, see
https://pytorch.org/docs/stable/autograd.html#autograd-graph). Each node's pre-hook sees the
cotangent that arrived (``grad_outputs``); its hook sees what the node sent on to the next nodes
(``grad_inputs``). Every hook is removed before :func:`trace_backward` returns or raises, and the
returned :class:`BackwardTrace` keeps only detached tensors and strings, never the graph.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from .._validate import check_cotangent, check_tensor
from .values import SHOWN_ENTRIES, dense_values

if TYPE_CHECKING:
    from .drawing import Drawing
    from .player import BackwardPlayer

__all__ = ["BackwardTrace", "TracedEdge", "TracedNode", "trace_backward"]

# forward operation -> expression template over the node's inputs (one per next function)
_TEMPLATES = {
    "mul": "{0} * {1}", "add": "{0} + {1}", "sub": "{0} - {1}", "rsub": "{1} - {0}",
    "div": "{0} / {1}", "pow": "{0} ** {1}", "mm": "{0} @ {1}", "matmul": "{0} @ {1}",
    "bmm": "{0} @ {1}", "mv": "{0} @ {1}", "dot": "{0} @ {1}", "neg": "-{0}",
    "addmm": "{1} @ {2} + {0}", "t": "{0}.T", "permute": "{0}.permute", "transpose": "{0}.T",
}
# saved attributes that hold the constant operand of a binary op, by input slot
_CONST_SLOTS = {0: ("_saved_self",), 1: ("_saved_other", "_saved_exponent", "_saved_mat2")}


_OP_NAMES: dict[type, str] = {}


def op_name(node: Any) -> str:
    """The forward operation of a ``grad_fn`` node: ``MulBackward0`` -> ``"mul"``."""
    kind = type(node)
    if kind not in _OP_NAMES:
        _OP_NAMES[kind] = _op_name(node)
    return _OP_NAMES[kind]


def _op_name(node: Any) -> str:
    cls = node.name().rsplit("::", 1)[-1]
    if cls == "AccumulateGrad":
        return "leaf"
    base = re.sub(r"Backward\d*$", "", cls)
    return re.sub(r"(?<!^)(?=[A-Z])", "_", base).lower() if base else cls


@dataclass(frozen=True)
class TracedNode:
    """One node of the backward graph and what flowed through it.

    Attributes
    ----------
    key : int
        Position in the graph walk from the output (0 is the output's ``grad_fn``).
    name : str or None
        The caller's name for the tensor this node belongs to, if any.
    label : str
        ``"c = 8 * b"`` for a named node, the forward operation (``"relu"``) otherwise.
    grad_fn : str
        The node's class, e.g. ``"MulBackward0"``, ``"AccumulateGrad"`` for a leaf.
    op : str
        The forward operation, e.g. ``"mul"`` (``"leaf"`` for a leaf tensor).
    order : int or None
        Execution order in the backward pass (0 first); ``None`` if the node did not run.
    grad_outputs : tuple of torch.Tensor or None
        The cotangent(s) that arrived, detached; one per forward output of the operation.
    grad_inputs : tuple of torch.Tensor or None
        What the node sent on, one entry per next node (``None`` where nothing was sent).
    children : tuple of int or None
        The ``key`` of the next node for each entry of ``grad_inputs`` (``None``: no gradient
        is needed there, e.g. a constant operand).
    is_leaf : bool
        Whether the node accumulates into a leaf tensor (``AccumulateGrad``).
    grad : torch.Tensor or None
        For a leaf: its ``.grad`` after the pass (or the gradient returned by
        ``torch.autograd.grad``), detached and copied.
    shape : tuple of int or None
        Shape of the (first) forward output, from the arriving cotangent.
    dtype : torch.dtype or None
        Its dtype.
    value : torch.Tensor or None
        The forward value of a named tensor with one element (``a = 5``, ``c = 200``), detached
        and copied; ``None`` for unnamed nodes and larger tensors.
    """

    key: int
    name: str | None
    label: str
    grad_fn: str
    op: str
    order: int | None
    grad_outputs: tuple[torch.Tensor | None, ...]
    grad_inputs: tuple[torch.Tensor | None, ...]
    children: tuple[int | None, ...]
    is_leaf: bool
    grad: torch.Tensor | None
    value: torch.Tensor | None = None

    @property
    def arrived(self) -> torch.Tensor | None:
        """The cotangent that arrived (the first one for multi-output operations)."""
        return self.grad_outputs[0] if self.grad_outputs else None

    @property
    def shape(self) -> tuple[int, ...] | None:
        t = self.arrived
        return None if t is None else tuple(t.shape)

    @property
    def dtype(self) -> torch.dtype | None:
        t = self.arrived
        return None if t is None else t.dtype


@dataclass(frozen=True)
class TracedEdge:
    """What one node sent to one next node.

    Attributes
    ----------
    src, dst : int
        Keys of the sending and the receiving node.
    slot : int
        Index into the sender's ``grad_inputs``.
    input_nr : int
        Which of the receiver's ``grad_outputs`` it feeds.
    cotangent : torch.Tensor or None
        The tensor sent (``None`` if the sender did not run or sent nothing).
    """

    src: int
    dst: int
    slot: int
    input_nr: int
    cotangent: torch.Tensor | None


class BackwardTrace:
    """What one backward pass sent through every node; returned by :func:`trace_backward`.

    Holds detached tensors and strings only: dropping it (and the output) frees the graph.
    Draw it with :meth:`to_svg` (notebooks show it directly), export it with :meth:`to_dot`.

    Attributes
    ----------
    nodes : tuple of TracedNode
        Every node of the graph, in the order of the graph walk (``nodes[0]`` is the output's).
    edges : tuple of TracedEdge
        One per (sender, next node) pair.
    gradient : torch.Tensor
        The upstream gradient ``v`` the pass started from (detached).
    output_name : str or None
        The caller's name for the output.
    unreached : tuple of str
        Names given in ``names`` whose tensors are not nodes of the traced graph (unused in the
        forward, cut from it, or used inside a region the hooks cannot see).
    opaque : tuple of str
        Nodes whose inner graph runs in a backward pass of its own, out of reach of node hooks
        (reentrant ``torch.utils.checkpoint``: ``CheckpointFunctionBackward``).
    """

    def __init__(self, nodes, edges, gradient, output_name, unreached=(), opaque=()):
        self.nodes: tuple[TracedNode, ...] = tuple(nodes)
        self.edges: tuple[TracedEdge, ...] = tuple(edges)
        self.gradient: torch.Tensor = gradient
        self.output_name: str | None = output_name
        self.unreached: tuple[str, ...] = tuple(unreached)
        self.opaque: tuple[str, ...] = tuple(opaque)

    # -- look-ups -----------------------------------------------------------------------------
    @property
    def executed(self) -> tuple[TracedNode, ...]:
        """The nodes that ran, in execution order."""
        ran = [n for n in self.nodes if n.order is not None]
        return tuple(sorted(ran, key=lambda n: n.order or 0))

    @property
    def leaves(self) -> dict[str, torch.Tensor | None]:
        """Leaf label -> its gradient (``.grad`` after the pass, or the returned gradient)."""
        return {n.name or n.label: n.grad for n in self.nodes if n.is_leaf}

    def node(self, name: str) -> TracedNode:
        """The node of the tensor the caller named ``name`` (or whose label is ``name``).

        Raises
        ------
        KeyError
            No node has that name or label; the message says why when it can (a name given
            to :func:`trace_backward` whose tensor is not in the traced graph, e.g. a parameter
            used inside a reentrant ``torch.utils.checkpoint`` region).
        """
        for n in self.nodes:
            if n.name == name:
                return n
        for n in self.nodes:
            if n.label == name:
                return n
        known = sorted({n.name or n.label for n in self.nodes})
        if name in self.unreached:
            why = (f"{name!r} was named, but its tensor is not a node of the traced graph: "
                   f"it was not used in computing the output, or its path was cut")
            if self.opaque:
                why += (f", or it is used inside a reentrant torch.utils.checkpoint region "
                        f"({', '.join(self.opaque)}): that region's graph is rebuilt and run "
                        f"in a separate backward pass that node hooks cannot see; use "
                        f"checkpoint(..., use_reentrant=False) to trace inside it")
            raise KeyError(why)
        raise KeyError(f"no node named {name!r} in the trace; known: {known}")

    def cotangent(self, name: str) -> torch.Tensor | None:
        """The upstream gradient that arrived at the node named ``name``.

        For a leaf it is the sum of what its incoming edges carried in this pass.
        """
        n = self.node(name)
        if n.is_leaf or n.arrived is None:
            return self._incoming_sum(n.key)
        return n.arrived

    def sent(self, src: str, dst: str) -> torch.Tensor | None:
        """The sum of what the node named ``src`` sent to the node named ``dst``."""
        s, d = self.node(src).key, self.node(dst).key
        parts = [e.cotangent for e in self.edges if e.src == s and e.dst == d and
                 e.cotangent is not None]
        return _sum(parts)

    def _incoming_sum(self, key: int) -> torch.Tensor | None:
        return _sum([e.cotangent for e in self.edges if e.dst == key and e.cotangent is not None])

    @property
    def first_nonfinite(self) -> TracedNode | None:
        """The first node (in execution order) that received finite cotangents but sent NaN/Inf.

        ``None`` if every cotangent is finite. If ``v`` itself holds NaN/Inf, the output's node.
        """
        for n in self.executed:
            sent_bad = any(not _finite(t) for t in n.grad_inputs)
            got_bad = any(not _finite(t) for t in n.grad_outputs)
            if got_bad and n.key == 0:
                return n
            if sent_bad and not got_bad:
                return n
            if n.is_leaf and not _finite(n.grad) and not got_bad:
                return n
        return None

    # -- output -------------------------------------------------------------------------------
    def to_svg(self, **kwargs: Any) -> str:
        """The drawing as SVG text; see :func:`gradarg.trace_svg` for options."""
        from .drawing import trace_svg

        return trace_svg(self, **kwargs)

    def draw(self, **kwargs: Any) -> Drawing:
        """The drawing as a :class:`gradarg.Drawing`, shown inline by notebooks.

        Keyword arguments go to :func:`gradarg.trace_svg` (``source``, ``title``).
        """
        from .drawing import Drawing

        return Drawing(self.to_svg(**kwargs))

    def player(self, **kwargs: Any) -> BackwardPlayer:
        """Step through this backward pass node by node: a :class:`~gradarg.BackwardPlayer`
        (buttons and arrow keys in a notebook or on a page; its ``steps`` as data)."""
        from .player import BackwardPlayer

        return BackwardPlayer(self, **kwargs)

    def to_dot(self) -> str:
        """The graph as Graphviz DOT text, edges labelled with their cotangents.

        Needs no Graphviz installation to produce; render it anywhere DOT is understood.
        """
        from .drawing import trace_dot

        return trace_dot(self)

    def _repr_svg_(self) -> str:
        return self.to_svg()

    def _repr_html_(self) -> str:
        from .drawing import framed

        return framed(self.to_svg())

    def __repr__(self) -> str:
        from ..show.render import fmt

        lines = [f"BackwardTrace: {len(self.executed)} of {len(self.nodes)} nodes ran"]
        for n in self.executed:
            got = "" if n.arrived is None else _short(n.arrived, fmt)
            lines.append(f"  {n.order:>3}  {n.label:<24} {n.grad_fn:<18} received {got}")
        for n in self.nodes:
            if n.is_leaf:
                g = "None" if n.grad is None else _short(n.grad, fmt)
                lines.append(f"  leaf {n.name or n.label}: grad {g}")
        return "\n".join(lines)


def _short(t: torch.Tensor, fmt) -> str:
    if t.numel() <= SHOWN_ENTRIES:
        return fmt(t.to_dense() if t.layout != torch.strided else t)
    vals = dense_values(t.detach())
    vals = vals.abs() if vals.is_complex() else vals  # same norm, no "discards imaginary"
    return f"shape {tuple(t.shape)}, norm {fmt(vals.double().norm())}"


def _finite(t: torch.Tensor | None) -> bool:
    if t is None or not (t.is_floating_point() or t.is_complex()):
        return True
    return bool(torch.isfinite(dense_values(t)).all())


def _sum(parts: list[torch.Tensor]) -> torch.Tensor | None:
    if not parts:
        return None
    total = parts[0].clone()
    for p in parts[1:]:
        total = total + p
    return total


def _walk(root: Any) -> tuple[list[Any], dict[Any, int]]:
    """Every node reachable from ``root`` through ``next_functions``, breadth first."""
    order, index = [root], {root: 0}
    i = 0
    while i < len(order):
        for child, _ in order[i].next_functions:
            if child is not None and child not in index:
                index[child] = len(order)
                order.append(child)
        i += 1
    return order, index


_SAVED_NAMES: dict[type, tuple[str, ...]] = {}


def saved_names(node: Any) -> tuple[str, ...]:
    """The ``_saved_*`` attributes of a node's class (cached per class)."""
    cls = type(node)
    if cls not in _SAVED_NAMES:
        _SAVED_NAMES[cls] = tuple(a for a in dir(node) if a.startswith("_saved_"))
    return _SAVED_NAMES[cls]


def graph_freed(nodes: Sequence[Any]) -> Any | None:
    """The first node whose saved tensors an earlier backward pass freed, or ``None``.

    Every saved attribute is read: a node's first one can be a plain number (``PowBackward0``'s
    exponent) that is never freed while its saved tensors are.
    """
    for node in nodes:
        for attr in saved_names(node):
            try:
                getattr(node, attr)
            except RuntimeError as err:
                if "freed" in str(err):
                    return node
    return None


def check_not_freed(nodes: Sequence[Any]) -> None:
    """Raise a ``RuntimeError`` if an earlier backward freed the graph's saved tensors."""
    node = graph_freed(nodes)
    if node is not None:
        raise RuntimeError(
            f"the output's graph was already freed by an earlier backward pass "
            f"({node.name()} no longer holds its saved tensors); call that earlier "
            f"backward with retain_graph=True, or recompute the output"
        )


# nodes whose inner graph runs in a backward pass of its own, out of reach of node hooks
_OPAQUE = ("CheckpointFunctionBackward",)


def opaque_nodes(nodes: Sequence[Any]) -> list[str]:
    """Names of reentrant-checkpoint nodes: what runs inside them is not seen by node hooks."""
    return [n.name() for n in nodes if n.name().rsplit("::", 1)[-1] in _OPAQUE]


def _names_by_node(names: Mapping[str, Any] | None, walk_index: dict[Any, int],
                   nodes: list[Any]) -> dict[int, str]:
    if names is None:
        return {}
    if not isinstance(names, Mapping):
        raise TypeError(f"names must be a mapping of str to tensors, got {type(names).__name__}")
    leaves = {id(n.variable): k for k, n in enumerate(nodes) if hasattr(n, "variable")}
    out: dict[int, str] = {}
    for name, t in names.items():
        check_tensor(f"names[{name!r}]", t)
        key = walk_index.get(t.grad_fn) if t.grad_fn is not None else leaves.get(id(t))
        if key is not None and key not in out:
            out[key] = str(name)
    return out


def _forward_values(names: Mapping[str, Any] | None, labels_by_key: dict[int, str],
                    walk_index: dict[Any, int], nodes: list[Any]) -> dict[int, torch.Tensor]:
    """Forward values of the named one-element tensors, by node key (for the drawings)."""
    if not names:
        return {}
    leaves = {id(n.variable): k for k, n in enumerate(nodes) if hasattr(n, "variable")}
    out: dict[int, torch.Tensor] = {}
    for name, t in names.items():
        key = walk_index.get(t.grad_fn) if t.grad_fn is not None else leaves.get(id(t))
        if (key is not None and labels_by_key.get(key) == str(name) and t.numel() == 1
                and t.layout == torch.strided):
            out[key] = t.detach().clone()
    return out


def _constant(node: Any, slot: int, consts: dict[str, torch.Tensor]) -> str | None:
    """The constant operand in ``slot``: its value if a number, its name if the caller named it."""
    for attr in _CONST_SLOTS.get(slot, ()):
        if attr in saved_names(node):
            try:
                val = getattr(node, attr)
            except RuntimeError:
                return None
            from ..show.render import fmt

            if isinstance(val, torch.Tensor) and val.numel() == 1:
                return fmt(val)
            if isinstance(val, (int, float)):
                return fmt(val)
            if isinstance(val, torch.Tensor):
                for name, t in consts.items():
                    if (t.shape == val.shape and t.numel() and
                            t.untyped_storage().data_ptr() == val.untyped_storage().data_ptr()):
                        return name
    return None


def _label(node: Any, key: int, names: dict[int, str], index: dict[Any, int],
           consts: dict[str, torch.Tensor]) -> str:
    op = op_name(node)
    name = names.get(key)
    if op == "leaf":
        return name or f"leaf {tuple(node.variable.shape)}"
    args = []
    for slot, (child, _) in enumerate(node.next_functions):
        if child is None:
            args.append(_constant(node, slot, consts) or "·")
        else:
            ck = index[child]
            args.append(names.get(ck) or ("·" if op_name(child) == "leaf" else op_name(child)))
    if op == "mul" and len(args) == 2 and node.next_functions[1][0] is None and args[1] != "·":
        expr = f"{args[1]} * {args[0]}"  # 8 * b: torch records it as mul(b, 8)
    elif op in _TEMPLATES and len(args) >= _TEMPLATES[op].count("{"):
        expr = _TEMPLATES[op].format(*args)
    elif args:
        expr = f"{op}({', '.join(args)})"
    else:
        expr = f"{op}()"
    return op if name is None else f"{name} = {expr}"


def _as_tensors(value: Any, what: str) -> tuple[torch.Tensor, ...] | None:
    if value is None:
        return None
    seq = (value,) if isinstance(value, torch.Tensor) else tuple(value)
    if not seq:
        raise ValueError(f"{what} is empty; expected at least one tensor")
    for i, t in enumerate(seq):
        check_tensor(f"{what}[{i}]", t)
        if not t.requires_grad:
            raise ValueError(f"{what}[{i}] does not require grad; backward cannot reach it")
    return seq


def _detach(ts: Sequence[Any]) -> tuple[torch.Tensor | None, ...]:
    return tuple(None if t is None else t.detach() for t in ts)


def trace_backward(
    output: torch.Tensor,
    gradient: Any = None,
    *,
    inputs: torch.Tensor | Sequence[torch.Tensor] | None = None,
    names: Mapping[str, torch.Tensor] | None = None,
    use_grad: bool = False,
    retain_graph: bool = False,
) -> BackwardTrace:
    """Run ``output.backward(gradient=gradient, inputs=inputs)`` and record every cotangent.

    Parameters
    ----------
    output : torch.Tensor
        The tensor to start from; must require grad and have a ``grad_fn``.
    gradient : torch.Tensor or number, optional
        The upstream gradient ``v`` (``grad_outputs``, cotangent), shape ``output.shape``.
        Optional only for a one-element output (then 1, as in ``Tensor.backward``).
    inputs : torch.Tensor or sequence, optional
        As ``Tensor.backward(inputs=...)``: accumulate only into these.
    names : dict, optional
        Names for tensors (``str`` to ``torch.Tensor``) of the graph, e.g. ``{"a": a, "b": b}``: the drawing then says
        ``c = 8 * b`` instead of ``MulBackward0``. Unnamed nodes show their operation.
    use_grad : bool
        Use ``torch.autograd.grad`` instead of ``backward``: no ``.grad`` is touched; each leaf's
        gradient is still recorded.
    retain_graph : bool
        Keep the graph for another backward pass (as in ``backward``).

    Returns
    -------
    BackwardTrace
        Every node with the cotangent it received and what it sent, in execution order.

    Raises
    ------
    TypeError
        ``output``, ``gradient``, an entry of ``inputs`` or of ``names`` is not a tensor.
    ValueError
        ``output`` does not require grad or has no ``grad_fn``; ``gradient`` is missing for a
        non-scalar output or has the wrong shape; an entry of ``inputs`` does not require grad.
    UserWarning
        The graph holds reentrant ``torch.utils.checkpoint`` regions, whose inside the hooks
        cannot see (the trace then records what is outside them).
    RuntimeError
        The graph was freed by an earlier backward pass without ``retain_graph=True``; or the
        backward pass itself fails (e.g. a saved tensor was modified in place): then the error is
        torch's, with a note naming the node that was running. Hooks are removed in all cases.

    Notes
    -----
    The caller's tensors end up as after a plain ``output.backward(gradient, inputs=inputs)``
    (or untouched with ``use_grad=True``): same ``.grad`` values, no hooks left behind.
    Node hooks: https://pytorch.org/docs/stable/autograd.html#backward-hooks-execution

    Where the hooks cannot see: a ``torch.compile``'d region is one node
    (``CompiledFunctionBackward``): the cotangents entering and leaving it and its parameters'
    gradients are recorded, the operations inside are not. A reentrant
    ``torch.utils.checkpoint`` region (``CheckpointFunctionBackward``) runs its inside in a
    backward pass of its own: a ``UserWarning`` says so, the parameters used inside are absent
    from the trace (listed in :attr:`BackwardTrace.unreached` when named) and their ``.grad`` is
    filled as usual; ``use_reentrant=False`` makes the inside visible. Sparse gradients
    (``nn.Embedding(sparse=True)``) are recorded as sparse tensors.

    Examples
    --------
    >>> import torch
    >>> a = torch.tensor(5.0, requires_grad=True)
    >>> b = a * a
    >>> c = 8 * b
    >>> d = torch.log(c)
    >>> t = trace_backward(d, names={"a": a, "b": b, "c": c, "d": d})
    >>> [(n.label, round(n.arrived.item(), 4)) for n in t.executed]
    [('d = log(c)', 1.0), ('c = 8 * b', 0.005), ('b = a * a', 0.04), ('a', 0.4)]
    >>> a.grad
    tensor(0.4000)
    """
    check_tensor("output", output)
    if not output.requires_grad:
        raise ValueError(
            "output does not require grad, so there is no backward pass to trace: it was "
            "computed under torch.no_grad()/inference_mode, or from tensors that do not "
            "require grad (detach(), .data, .item(), integer casts cut the graph)"
        )
    if output.grad_fn is None:
        raise ValueError(
            "output is a leaf tensor (no grad_fn): there is no graph to trace; pass a tensor "
            "computed from it"
        )
    if gradient is None:
        if output.numel() != 1:
            raise ValueError(
                f"output has shape {tuple(output.shape)}: pass gradient= (the upstream "
                f"gradient, shape {tuple(output.shape)}); it can be omitted only for a "
                f"one-element output"
            )
        gradient = torch.ones_like(output)
    v = check_cotangent(gradient, output, name="gradient")
    input_seq = _as_tensors(inputs, "inputs")
    order, index = _walk(output.grad_fn)
    labels_by_key = _names_by_node(names, index, order)
    check_not_freed(order)
    opaque = opaque_nodes(order)
    if opaque:
        warnings.warn(
            f"the graph holds {len(opaque)} reentrant torch.utils.checkpoint node(s) "
            f"({opaque[0]}): the operations and parameters inside run in a backward pass of "
            f"their own that node hooks cannot see, so they are absent from the trace (their "
            f".grad is still filled); use checkpoint(..., use_reentrant=False) to trace them",
            UserWarning, stacklevel=2)
    leaf_ids = {id(n.variable) for n in order if hasattr(n, "variable")}
    unreached = tuple(str(k) for k, t in (names or {}).items()
                      if not (t.grad_fn in index if t.grad_fn is not None else id(t) in leaf_ids))
    consts = {k: t for k, t in (names or {}).items() if not t.requires_grad}
    labels = [_label(n, k, labels_by_key, index, consts) for k, n in enumerate(order)]
    values = _forward_values(names, labels_by_key, index, order)
    output_name = labels_by_key.get(0)

    arrived: dict[int, tuple] = {}
    sent: dict[int, tuple] = {}
    ran: list[int] = []

    def make_hooks(key: int):
        def pre(grad_outputs):
            ran.append(key)
            arrived[key] = grad_outputs

        def post(grad_inputs, grad_outputs):
            sent[key] = grad_inputs

        return pre, post

    # .grad before the pass: where there was none, .grad afterwards is what arrived (no copy)
    had_grad = {k for k, n in enumerate(order) if hasattr(n, "variable") and
                n.variable.grad is not None} if not use_grad else set()
    handles = []
    grads_returned: dict[int, torch.Tensor | None] = {}
    try:
        for key, node in enumerate(order):
            pre, post = make_hooks(key)
            handles.append(node.register_prehook(pre))
            handles.append(node.register_hook(post))
        if use_grad:
            targets = input_seq or tuple(n.variable for n in order if hasattr(n, "variable"))
            res = torch.autograd.grad(output, targets, grad_outputs=v,
                                      retain_graph=retain_graph, allow_unused=True)
            by_id = {id(n.variable): k for k, n in enumerate(order) if hasattr(n, "variable")}
            for t, g in zip(targets, res, strict=True):
                if id(t) in by_id:
                    grads_returned[by_id[id(t)]] = None if g is None else g.detach().clone()
        else:
            output.backward(gradient=v, inputs=input_seq, retain_graph=retain_graph)
    except RuntimeError as err:
        if ran and hasattr(err, "add_note"):
            err.add_note(f"gradarg.trace_backward: the pass failed in or after node "
                         f"'{labels[ran[-1]]}' ({order[ran[-1]].name()})")
        raise
    finally:
        for h in handles:
            h.remove()
        handles.clear()

    run_order = {k: i for i, k in enumerate(ran)}
    nodes, edges = [], []
    for key, node in enumerate(order):
        is_leaf = hasattr(node, "variable")
        grad = None
        if is_leaf:
            if use_grad:
                grad = grads_returned.get(key)
            elif key not in had_grad and arrived.get(key):
                grad = arrived[key][0].detach()  # AccumulateGrad copied it into .grad
            else:
                g = node.variable.grad
                grad = None if g is None else g.detach().clone()
        children = tuple(None if c is None else index[c] for c, _ in node.next_functions)
        got = sent.get(key, ())
        nodes.append(TracedNode(
            key=key, name=labels_by_key.get(key), label=labels[key],
            grad_fn=node.name().rsplit("::", 1)[-1], op=op_name(node),
            order=run_order.get(key), grad_outputs=_detach(arrived.get(key, ())),
            grad_inputs=_detach(got), children=children, is_leaf=is_leaf, grad=grad,
            value=values.get(key),
        ))
        for slot, (child, input_nr) in enumerate(node.next_functions):
            if child is not None:
                cot = got[slot] if slot < len(got) else None
                edges.append(TracedEdge(key, index[child], slot, input_nr,
                                        None if cot is None else cot.detach()))
    return BackwardTrace(nodes, edges, v, output_name, unreached, opaque)
