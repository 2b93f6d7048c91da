"""Reading autograd's graph: the one module of the trace room that looks inside backward nodes.

A backward node (``tensor.grad_fn``, a ``torch.autograd.graph.Node``) links to the nodes of
its inputs through ``next_functions``; a leaf's node (``AccumulateGrad``) holds the leaf as
``variable``; a node keeps what its backward needs as ``_saved_*`` attributes, which
``backward()`` frees unless ``retain_graph=True`` (reading one then raises "...after they have
already been freed") and which raise torch's version-counter error when the tensor was modified
in place after it was saved.  The tracer, the player, the diagnosis and ``watch`` read nodes
only through the functions here (https://pytorch.org/docs/stable/autograd.html#autograd-graph,
https://pytorch.org/docs/stable/autograd.html#saved-tensors).

Imports nothing of the trace room.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Collection, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import torch

if TYPE_CHECKING:
    import networkx as nx

__all__ = [
    "MOVES", "RESHAPES", "Graph", "accumulator", "check_not_freed", "children", "constant_exponent",
    "constant_operands", "edges_into", "first_nodes",
    "graph_freed", "in_place_edits", "is_custom", "is_leaf", "leaf_tensor", "modified_in_place",
    "node_class", "op_name", "opaque_nodes", "reach", "saved", "saved_names", "saved_tensors",
    "saved_value",
    "saved_values", "single_input_chain", "through_reshapes", "walk",
]

# -- what a node is ---------------------------------------------------------------------------
_OP_NAMES: dict[type, str] = {}


def node_class(node: Any) -> str:
    """The node's class without its namespace: ``"MulBackward0"``, ``"AccumulateGrad"``."""
    return node.name().rsplit("::", 1)[-1]


def op_name(node: Any) -> str:
    """The forward operation of a ``grad_fn`` node: ``MulBackward0`` -> ``"mul"``, a leaf's
    ``AccumulateGrad`` -> ``"leaf"`` (cached per class).

    >>> import torch
    >>> a = torch.ones(2, requires_grad=True)
    >>> op_name((a * 2).grad_fn), op_name(torch.log1p(a).grad_fn)
    ('mul', 'log1_p')
    """
    kind = type(node)
    if kind not in _OP_NAMES:
        cls = node_class(node)
        if cls == "AccumulateGrad":
            _OP_NAMES[kind] = "leaf"
        else:
            base = re.sub(r"Backward\d*$", "", cls)
            _OP_NAMES[kind] = re.sub(r"(?<!^)(?=[A-Z])", "_", base).lower() if base else cls
    return _OP_NAMES[kind]


def children(node: Any) -> tuple[tuple[Any, int], ...]:
    """``(next node or None, input number)`` for each input of the node's operation, in order
    (``None``: that input needs no gradient, e.g. a constant operand)."""
    return node.next_functions


def accumulator(t: torch.Tensor) -> Any:
    """The ``AccumulateGrad`` node of a leaf tensor that requires grad (public:
    ``torch.autograd.graph.get_gradient_edge``; the same node object while a graph or the
    caller holds it).  Raises ``RuntimeError`` for a tensor that does not require grad."""
    return torch.autograd.graph.get_gradient_edge(t).node


def is_leaf(node: Any) -> bool:
    """Whether the node accumulates into a leaf tensor (``AccumulateGrad``)."""
    return hasattr(node, "variable")


def leaf_tensor(node: Any) -> torch.Tensor | None:
    """The leaf tensor an ``AccumulateGrad`` node fills, ``None`` for any other node."""
    return getattr(node, "variable", None)


def single_input_chain(node: Any, depth: int) -> tuple[Any, list[Any]] | None:
    """The leaf node (``AccumulateGrad``) that ``node``'s value is computed from alone, each
    operation on the way taking one input with history (a slice, a view, ``tanh``), and those
    operations, outermost first; ``None`` when one takes two or more, or when no leaf is met
    within ``depth`` nodes."""
    ops: list[Any] = []
    for _ in range(depth):
        if is_leaf(node):
            return node, ops
        kids = [c for c, _ in children(node) if c is not None]
        if len(kids) != 1:
            return None
        ops.append(node)
        node = kids[0]
    return None


def is_custom(node: Any) -> bool:
    """Whether the node is the backward of a custom ``torch.autograd.Function``."""
    return isinstance(node, torch.autograd.function.BackwardCFunction)


# nodes whose inner graph runs in a backward pass of its own, out of reach of node hooks
_OPAQUE = ("CheckpointFunctionBackward",)


def opaque_nodes(nodes: Sequence[Any]) -> list[str]:
    """Names of reentrant-checkpoint nodes: what runs inside them is not seen by node hooks."""
    return [n.name() for n in nodes if node_class(n) in _OPAQUE]


# -- what a node saved ------------------------------------------------------------------------
_SAVED_NAMES: dict[type, tuple[str, ...]] = {}


def _saved_names(node: Any) -> tuple[str, ...]:
    """The ``_saved_*`` attributes of a node's class (cached per class)."""
    cls = type(node)
    if cls not in _SAVED_NAMES:
        _SAVED_NAMES[cls] = tuple(a for a in dir(node) if a.startswith("_saved_"))
    return _SAVED_NAMES[cls]


def saved_names(node: Any) -> tuple[str, ...]:
    """The names of the values ``node``'s operation saved (``_saved_target``, ...): known from
    its class, so still there once ``backward()`` freed the values themselves."""
    return _saved_names(node)


def _signed(value: Any) -> Any:
    """An int64 the node's Python binding gives as unsigned (``dim=-1`` read as ``2**64 - 1``,
    in ``_saved_dim`` of softmax, sum, select, transpose, ...) back to its sign; tuples of
    them too; other values as they are."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 2**63:
        return value - 2**64
    if isinstance(value, tuple) and any(isinstance(v, int) and v >= 2**63 for v in value):
        return tuple(_signed(v) for v in value)
    return value


def _read(node: Any, attr: str) -> tuple[Any, RuntimeError | None]:
    try:
        return _signed(getattr(node, attr)), None
    except RuntimeError as err:  # freed by a backward, or modified in place since saved
        return None, err


def _hooked(node: Any, attr: str) -> bool:
    """Whether the value ``node`` saved as ``attr`` went through saved-tensor hooks
    (``torch.autograd.graph.saved_tensors_hooks``: non-reentrant ``torch.utils.checkpoint``,
    offloading to the CPU): reading it runs the unpack hook, which may recompute the forward
    and may be allowed once only.  Read from the raw ``SavedTensor`` (``_raw_saved_*``, as in
    https://pytorch.org/docs/stable/autograd.html#hooks-for-saved-tensors)."""
    raw = getattr(node, "_raw" + attr, None)
    raws = raw if isinstance(raw, (list, tuple)) else (raw,)
    return any(getattr(r, "unpack_hook", None) is not None for r in raws)


def saved(node: Any, *, hooked: bool = True) -> Iterator[tuple[str, Any, RuntimeError | None]]:
    """``(attribute, value, None)`` for every value the node saved for its backward, or
    ``(attribute, None, error)`` where reading it raises (freed by an earlier backward, or
    modified in place after it was saved).  A value can be a plain number (``PowBackward0``'s
    exponent), which is never freed.  ``hooked=False`` leaves out the values saved through
    saved-tensor hooks (reading one runs its unpack hook: under non-reentrant checkpointing, a
    recomputation of the forward that the backward pass then cannot repeat)."""
    for attr in _saved_names(node):
        if not hooked and _hooked(node, attr):
            continue
        value, err = _read(node, attr)
        yield attr, value, err


def saved_value(node: Any, attr: str, *, hooked: bool = True) -> Any | None:
    """The value ``node`` saved as ``attr`` (``"_saved_other"``), or ``None`` where it has no
    such attribute or reading it raises (freed, or modified in place since it was saved), or
    (``hooked=False``) it went through saved-tensor hooks (see :func:`saved`)."""
    if attr not in _saved_names(node) or (not hooked and _hooked(node, attr)):
        return None
    return _read(node, attr)[0]


def saved_values(nodes: Sequence[Any], *, hooked: bool = True) -> Iterator[tuple[Any, str, Any]]:
    """``(node, attribute, value)`` for every saved value that can still be read (see
    :func:`saved` for ``hooked``)."""
    for node in nodes:
        for attr, value, err in saved(node, hooked=hooked):
            if err is None:
                yield node, attr, value


def saved_tensors(nodes: Sequence[Any]) -> Iterator[tuple[Any, str, torch.Tensor]]:
    """``(node, attribute, tensor)`` for every saved tensor that can still be read."""
    for node, attr, value in saved_values(nodes):
        if isinstance(value, torch.Tensor):
            yield node, attr, value


# saved attributes that hold the operand of a binary operation, by input slot
_OPERAND_SLOTS = {0: ("_saved_self",), 1: ("_saved_other", "_saved_exponent", "_saved_mat2")}


def constant_operands(node: Any, slot: int) -> Iterator[Any]:
    """The saved values that can hold the operand in input ``slot`` (``8`` of ``8 * b``), in
    order; stops at one that can no longer be read."""
    names = _saved_names(node)
    for attr in _OPERAND_SLOTS.get(slot, ()):
        if attr in names:
            value, err = _read(node, attr)
            if err is not None:
                return
            yield value


RESHAPES = frozenset({"ViewBackward0", "UnsafeViewBackward0", "ReshapeAliasBackward0",
                      "SqueezeBackward0", "SqueezeBackward1", "UnsqueezeBackward0"})
"""Nodes that only reshape their one input (its entries unchanged, in order)."""

MOVES = RESHAPES | {"TBackward0", "TransposeBackward0", "PermuteBackward0", "ExpandBackward0",
                    "CloneBackward0", "ToCopyBackward0"}
"""Nodes that only reshape, move, repeat or copy their one input's entries: no arithmetic on a
value (the "moves and views" of :data:`~gradarg.trace.graph.operators.OPERATORS`, as node
classes, with ``_to_copy``'s dtype cast)."""


def through_reshapes(node: Any) -> Any:
    """The first node at or below ``node`` that is not one of :data:`RESHAPES`, following
    each reshape's one input (``None`` at the end of the chain)."""
    while node is not None and node_class(node) in RESHAPES:
        node = node.next_functions[0][0] if node.next_functions else None
    return node


def constant_exponent(node: Any) -> Any:
    """The exponent a ``pow`` node saved (a number for ``x ** 3``), or ``None``."""
    return getattr(node, "_saved_exponent", None) if "_saved_exponent" in _saved_names(node) \
        else None


def _first_error(nodes: Sequence[Any], words: str) -> Any | None:
    for node in nodes:
        for _, _, err in saved(node):
            if err is not None and words in str(err):
                return node
    return None


def graph_freed(nodes: Sequence[Any]) -> Any | None:
    """The first node whose saved tensors an earlier backward pass freed, or ``None``.

    Every saved attribute is read: a node's first one can be a plain number (``PowBackward0``'s
    exponent) that is never freed while its saved tensors are.
    """
    return _first_error(nodes, "freed")


def check_not_freed(nodes: Sequence[Any]) -> None:
    """Raise a ``RuntimeError`` if an earlier backward freed the graph's saved tensors."""
    node = graph_freed(nodes)
    if node is not None:
        raise RuntimeError(
            f"the output's graph was already freed by an earlier backward pass "
            f"({node.name()} no longer holds its saved tensors); call that earlier "
            f"backward with retain_graph=True, or recompute the output"
        )


def modified_in_place(nodes: Sequence[Any]) -> str | None:
    """The name of the first node (output side first) one of whose saved tensors was modified
    in place since it was saved: reading it raises torch's version-counter error.  Saved
    tensors a backward already freed are skipped."""
    node = _first_error(nodes, "modified by an inplace operation")
    return None if node is None else node.name()


def in_place_edits(nodes: Sequence[Any], *, hooked: bool = True,
                   ) -> Iterator[tuple[Any, str, str]]:
    """``(node, attribute, torch's message)`` for every saved tensor, output side first, that
    was modified in place after the node saved it: reading it raises torch's version-counter
    error ("... is at version 2; expected version 1 instead"), whether or not a backward pass
    already ran through other parts of the graph.  Saved tensors a backward freed are skipped
    (their version can no longer be read), and with ``hooked=False`` those saved through
    saved-tensor hooks (see :func:`saved`)."""
    for node in nodes:
        for attr, _, err in saved(node, hooked=hooked):
            if err is not None and "modified by an inplace operation" in str(err):
                yield node, attr, str(err)


# -- the graph --------------------------------------------------------------------------------
def walk(root: Any, *more: Any) -> tuple[list[Any], dict[Any, int]]:
    """Every node reachable from ``root`` (and the roots in ``more``) through
    ``next_functions``, breadth first, and each node's position in that order (``root`` is 0,
    the others follow in order)."""
    order, index = [root], {root: 0}
    for r in more:
        if r not in index:
            index[r] = len(order)
            order.append(r)
    i = 0
    while i < len(order):
        for child, _ in order[i].next_functions:
            if child is not None and child not in index:
                index[child] = len(order)
                order.append(child)
        i += 1
    return order, index


def first_nodes(start: Sequence[Any], limit: int) -> list[Any]:
    """The first ``limit`` nodes reached from the nodes ``start`` (themselves first) through
    ``next_functions``, breadth first, each once: a loss's first operations."""
    out: list[Any] = []
    todo, seen = deque(start), set(start)
    while todo and len(out) < limit:
        n = todo.popleft()
        out.append(n)
        for c, _ in n.next_functions:
            if c is not None and c not in seen:
                seen.add(c)
                todo.append(c)
    return out


def reach(node: Any, wanted: Collection[str], through: Collection[str], depth: int) -> Any:
    """The first node of a class in ``wanted`` below ``node`` (its inputs, their inputs, ...),
    following only nodes of a class in ``through`` and at most ``depth`` of them deep, or
    ``None``: "the matrix product whose result reaches this softmax through views and scalings
    only".  Depth first, in ``next_functions`` order from the last input."""
    todo = [(c, 0) for c, _ in node.next_functions if c is not None]
    least: dict[Any, int] = {}
    while todo:
        n, d = todo.pop()
        name = type(n).__name__
        if name in wanted:
            return n
        if name in through and d < depth and least.get(n, depth) > d:
            least[n] = d
            todo.extend((c, d + 1) for c, _ in n.next_functions if c is not None)
    return None


def edges_into(roots: Sequence[Any], ends: Any) -> dict[Any, list[tuple[int, Any]]]:
    """The nodes reachable from ``roots`` with an edge into a node of ``ends`` (a mapping
    node -> key): node -> ``[(input number, key), ...]`` (the input number indexes the node's
    ``grad_inputs`` in a ``Node.register_hook`` post hook)."""
    found: dict[Any, list[tuple[int, Any]]] = {}
    if not roots:
        return found
    for node in walk(*roots)[0]:
        for slot, (child, _) in enumerate(node.next_functions):
            key = None if child is None else ends.get(child)
            if key is not None:
                found.setdefault(node, []).append((slot, key))
    return found


class Graph:
    """The nodes reachable from an output's ``grad_fn`` (``nodes[0]``), numbered as
    :func:`walk` numbers them, and their edges as a ``networkx.DiGraph`` built once, when first
    asked for (``import gradarg`` stays light).

    >>> import torch
    >>> a = torch.ones(2, requires_grad=True)
    >>> g = Graph((a * 2).sum().grad_fn)
    >>> [op_name(n) for n in g.nodes], sorted(g.on_path(2))
    (['sum', 'mul', 'leaf'], [0, 1, 2])
    """

    def __init__(self, root: Any | None, *more: Any) -> None:
        self.nodes, self.index = walk(root, *more) if root is not None else ([], {})
        self._nx: nx.DiGraph | None = None

    @property
    def nx(self) -> nx.DiGraph:
        """Node position -> positions of its next nodes."""
        if self._nx is None:
            import networkx as nx  # imported when used: import gradarg stays light

            g = nx.DiGraph()
            g.add_nodes_from(range(len(self.nodes)))
            g.add_edges_from((i, self.index[c]) for i, n in enumerate(self.nodes)
                             for c, _ in n.next_functions if c is not None)
            self._nx = g
        return self._nx

    def key_of(self, tensor: torch.Tensor) -> int | None:
        """The position of ``tensor``'s node (its ``grad_fn``, or for a leaf its
        ``AccumulateGrad``), ``None`` if it is not in the graph."""
        if tensor.grad_fn is not None:
            return self.index.get(tensor.grad_fn)
        return next((k for k, n in enumerate(self.nodes) if leaf_tensor(n) is tensor), None)

    def leaves(self) -> list[torch.Tensor]:
        """The leaf tensors of the graph, in walk order."""
        return [n.variable for n in self.nodes if is_leaf(n)]

    def reachable(self, skip: set[tuple[int, int]] = frozenset(),  # type: ignore[assignment]
                  start: Sequence[int] = (0,)) -> set[int]:
        """Nodes reachable from ``start`` (default the output's node) through
        ``next_functions``, leaving out the edges in ``skip``: ``(node, input number)``.

        >>> import torch
        >>> a, b = torch.ones(2, requires_grad=True), torch.ones(2, requires_grad=True)
        >>> g = Graph((a * b).sum().grad_fn)
        >>> len(g.reachable()), len(g.reachable({(1, 0)}))
        (4, 3)
        """
        seen = set(start)
        todo = list(start)
        while todo:
            k = todo.pop()
            for slot, (child, _) in enumerate(self.nodes[k].next_functions):
                if child is None or (k, slot) in skip:
                    continue
                c = self.index[child]
                if c not in seen:
                    seen.add(c)
                    todo.append(c)
        return seen

    def ancestors(self, key: int) -> set[int]:
        """Nodes from which ``key`` can be reached (the output side of it)."""
        import networkx as nx

        return nx.ancestors(self.nx, key)

    def on_path(self, key: int) -> set[int]:
        """Nodes on some path from the output's node (0) to ``key``."""
        import networkx as nx

        return (nx.ancestors(self.nx, key) | {key}) & (nx.descendants(self.nx, 0) | {0})

    def cut_by(self, key: int, blocked: set[int]) -> bool:
        """Whether every path from the output's node to ``key`` passes through ``blocked``."""
        import networkx as nx

        if 0 in blocked:
            return True
        h = self.nx.subgraph(set(self.nx) - blocked)
        return key not in h or not nx.has_path(h, 0, key)
