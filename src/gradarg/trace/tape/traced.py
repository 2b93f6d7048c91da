"""What one traced backward pass recorded: :class:`TracedNode`, :class:`TracedEdge` and the
:class:`BackwardTrace` that :func:`~gradarg.trace.tape.tracer.trace_backward` returns.

Detached tensors and strings only, never the graph: dropping a trace (and the output) frees the
graph.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from ...show.render import fmt
from ..graph.values import SHOWN_ENTRIES, dense_values, finite

if TYPE_CHECKING:
    from ..draw.drawing import Drawing
    from ..draw.player import BackwardPlayer

__all__ = ["BackwardTrace", "TracedEdge", "TracedNode"]


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
        """The shape of the cotangent that arrived (:attr:`arrived`), or ``None`` when
        none did."""
        t = self.arrived
        return None if t is None else tuple(t.shape)

    @property
    def dtype(self) -> torch.dtype | None:
        """The dtype of the cotangent that arrived (:attr:`arrived`), or ``None`` when
        none did."""
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
            return self.incoming(n.key)
        return n.arrived

    def sent(self, src: str, dst: str) -> torch.Tensor | None:
        """The sum of what the node named ``src`` sent to the node named ``dst``."""
        s, d = self.node(src).key, self.node(dst).key
        parts = [e.cotangent for e in self.edges if e.src == s and e.dst == d and
                 e.cotangent is not None]
        return _sum(parts)

    def incoming(self, key: int) -> torch.Tensor | None:
        """The sum of what the edges into the node numbered ``key`` carried (``None``: none
        carried a gradient)."""
        return _sum([e.cotangent for e in self.edges if e.dst == key and e.cotangent is not None])

    @property
    def first_nonfinite(self) -> TracedNode | None:
        """The first node (in execution order) that received finite cotangents but sent NaN/Inf.

        ``None`` if every cotangent is finite. If ``v`` itself holds NaN/Inf, the output's node.
        """
        for n in self.executed:
            sent_bad = any(not finite(t) for t in n.grad_inputs)
            got_bad = any(not finite(t) for t in n.grad_outputs)
            if got_bad and n.key == 0:
                return n
            if sent_bad and not got_bad:
                return n
            if n.is_leaf and not finite(n.grad) and not got_bad:
                return n
        return None

    # -- output -------------------------------------------------------------------------------
    def to_svg(self, **kwargs: Any) -> str:
        """The drawing as SVG text; see :func:`gradarg.trace_svg` for options."""
        from ..draw.drawing import trace_svg

        return trace_svg(self, **kwargs)

    def draw(self, **kwargs: Any) -> Drawing:
        """The drawing as a :class:`gradarg.Drawing`, shown inline by notebooks.

        Keyword arguments go to :func:`gradarg.trace_svg` (``source``, ``title``).
        """
        from ..draw.drawing import Drawing

        return Drawing(self.to_svg(**kwargs))

    def player(self, **kwargs: Any) -> BackwardPlayer:
        """Step through this backward pass node by node: a :class:`~gradarg.BackwardPlayer`
        (buttons and arrow keys in a notebook or on a page; its ``steps`` as data)."""
        from ..draw.player import BackwardPlayer

        return BackwardPlayer(self, **kwargs)

    def to_dot(self) -> str:
        """The graph as Graphviz DOT text, edges labelled with their cotangents.

        Needs no Graphviz installation to produce; render it anywhere DOT is understood.
        """
        from ..draw.drawing import trace_dot

        return trace_dot(self)

    def _repr_svg_(self) -> str:
        return self.to_svg()

    def _repr_html_(self) -> str:
        from ..draw.drawing import framed

        return framed(self.to_svg())

    def __repr__(self) -> str:
        lines = [f"BackwardTrace: {len(self.executed)} of {len(self.nodes)} nodes ran"]
        for n in self.executed:
            got = "" if n.arrived is None else _short(n.arrived)
            lines.append(f"  {n.order:>3}  {n.label:<24} {n.grad_fn:<18} received {got}")
        for n in self.nodes:
            if n.is_leaf:
                g = "None" if n.grad is None else _short(n.grad)
                lines.append(f"  leaf {n.name or n.label}: grad {g}")
        return "\n".join(lines)


def _short(t: torch.Tensor) -> str:
    if t.numel() <= SHOWN_ENTRIES:
        return fmt(t.to_dense() if t.layout != torch.strided else t)
    vals = dense_values(t.detach())
    vals = vals.abs() if vals.is_complex() else vals  # same norm, no "discards imaginary"
    return f"shape {tuple(t.shape)}, norm {fmt(vals.double().norm())}"


def _sum(parts: list[torch.Tensor]) -> torch.Tensor | None:
    if not parts:
        return None
    total = parts[0].clone()
    for p in parts[1:]:
        total = total + p
    return total

