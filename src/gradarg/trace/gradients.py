"""What a gradient shows: its entries, how ``.grad`` differs from one backward pass, and where
in the graph a cotangent became zero or NaN.  Read by the diagnosis rules of :mod:`.causes`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

import torch

from ..show.render import fmt
from .cuts import is_mask
from .nodes import (
    Graph,
    children,
    is_custom,
    leaf_tensor,
    node_class,
    op_name,
    saved_tensors,
    saved_value,
    saved_values,
    walk,
)
from .operators import factors, row
from .values import dense_values, finite

if TYPE_CHECKING:
    from .traced import BackwardTrace, TracedNode

__all__ = [
    "Zero", "Zeros", "bad_data", "compare", "custom_on_path", "forward_origin", "random_nodes",
    "stats", "zero_node",
]


def stats(t: torch.Tensor) -> tuple[int, int, int]:
    """``(entries stored, non-finite, nonzero)`` of a gradient (sparse: its stored values)."""
    vals = dense_values(t.detach())
    fin = torch.isfinite(vals)
    return vals.numel(), int((~fin).sum()), int(vals.ne(0).sum())


def _flat(t: torch.Tensor) -> torch.Tensor:
    t = t.detach()
    t = t.to_dense() if t.layout != torch.strided else t
    return t.reshape(-1).to(torch.complex128 if t.is_complex() else torch.float64)


def compare(current: torch.Tensor, grad: torch.Tensor, tensor: torch.Tensor,
            xname: str) -> tuple[str, str] | None:
    """``(case, message)`` when ``.grad`` differs from one pass, saying only what the tensors
    show; ``None`` when they agree."""
    c, g = _flat(current), _flat(grad)
    if c.shape != g.shape or torch.allclose(c, g, rtol=1e-5, atol=1e-7):
        return None
    cn, gn = float(c.abs().norm()), float(g.abs().norm())
    if gn == 0:
        return "differs", (
            f"one backward pass gives {xname} a zero gradient, but {xname}.grad holds values "
            f"(norm {fmt(cn, 3)}): consistent with gradients accumulated over earlier "
            f"backward() calls (no zero_grad()) or an edit of .grad")
    ratio = cn / gn
    cos = float(torch.vdot(c, g).real) / (cn * gn) if cn else 0.0
    if cos > 1 - 1e-6:
        k = round(ratio)
        if k >= 2 and abs(ratio - k) < 1e-4 * k:
            return "accumulated", (
                f"{xname}.grad holds {k} times what one backward pass gives: consistent with "
                f"{k} backward() calls on this same graph's inputs without zeroing .grad in "
                f"between (.grad accumulates); call optimizer.zero_grad() (or set "
                f"{xname}.grad = None) before each backward")
        more = ("not with accumulation of passes, which would not shrink it" if ratio < 1
                else "or with repeated passes")
        return "differs", (
            f"{xname}.grad is what one backward pass gives scaled by {fmt(ratio, 3)}: "
            f"consistent with gradient clipping (clip_grad_norm_ rescales every .grad by one "
            f"factor), a scaled loss (GradScaler, loss / n) or a hook; {more}")
    d = c - g
    x = _flat(tensor)
    xx = float(torch.vdot(x, x).real)
    if x.numel() > 1 and xx > 0:
        lam = torch.vdot(x, d) / xx
        if torch.allclose(d, lam * x, rtol=1e-4, atol=1e-7 * float(d.abs().max())):
            return "differs", (
                f"{xname}.grad differs from what one backward pass gives by "
                f"{fmt(lam.real.item(), 3)} · {xname} itself: consistent with weight decay "
                f"(an L2 term with that coefficient) added to .grad by the optimizer or by "
                f"hand; the gradient of the loss itself is the one backward gives")
    return "differs", (
        f"{xname}.grad differs from what one backward pass gives (norm ratio {fmt(ratio, 3)}, "
        f"cosine {fmt(cos, 3)}): consistent with gradients accumulated over earlier backward() "
        f"calls without zero_grad(), with an edit of .grad (clipping per value, weight "
        f"decay, a hook), with a backward(gradient=...) other than the one given here, or "
        f"with a recomputed forward that is random (pass a function that recomputes the "
        f"output instead of the output, and it is checked); the tensors do not show which")


def random_nodes(nodes: list[Any]) -> str | None:
    """What in the graph shows a random forward: a dropout node, a random draw, or a factor
    saved as a dropout mask (0 and one value above 1, the ``1 / (1 - p)`` of dropout)."""
    for node in nodes:
        if row(op_name(node)).random:
            return f"the graph holds {node_class(node)} (dropout in training mode, or a random draw)"
    for node, _, v in saved_tensors(nodes):
        if row(op_name(node)).product and not v.requires_grad and is_mask(v):
            keep = float(v.max())
            if keep > 1:
                return (f"{node_class(node)} multiplies by a dropout mask (0 and {fmt(keep, 4)}, "
                        f"dropout in training mode)")
    return None


def custom_on_path(graph: Graph, key: int) -> str | None:
    """The first custom ``autograd.Function`` node on a path from the output to ``key``."""
    custom = [graph.nodes[k].name() for k in sorted(graph.on_path(key))
              if is_custom(graph.nodes[k])]
    return custom[0] if custom else None


def zero_node(trace: BackwardTrace, graph: Graph, target_key: int) -> TracedNode | None:
    """The first node (execution order) on a path to the target that received a nonzero
    cotangent and sent only zeros towards the target (labels need not be unique: a model has
    many ``mul`` nodes)."""
    towards = graph.ancestors(target_key) | {target_key}
    for n in trace.executed:
        if n.key not in towards or n.key == target_key:
            continue
        got = n.arrived
        if got is None or not bool((dense_values(got) != 0).any()):
            continue
        outs = [e.cotangent for e in trace.edges if e.src == n.key and e.dst in towards]
        if outs and all(t is None or not bool((dense_values(t) != 0).any()) for t in outs):
            return n
    return None


class Zero(NamedTuple):
    """Why a value of the graph is all zeros: the words (``"lora.B.weight, which is all
    zeros"``) and the all-zero leaf tensors it comes from."""

    text: str
    leaves: tuple[torch.Tensor, ...]


def all_zero(v: Any) -> bool:
    """Whether ``v`` (a tensor with entries, or a number) is exactly zero everywhere."""
    if isinstance(v, torch.Tensor):
        return v.numel() > 0 and not bool(dense_values(v.detach()).ne(0).any())
    return isinstance(v, (int, float, complex)) and not isinstance(v, bool) and v == 0


class Zeros:
    """Which values of a graph are all zeros, as its structure shows: a leaf whose values are
    all zero, a product (a row of :mod:`.operators` with ``operands``) with such an operand, a
    view or copy of such a value (``keeps_zero``); while the saved tensors are there, a saved
    operand that is all zeros too (data, a mask), unless ``saved=False`` (reading a saved
    tensor under non-reentrant checkpointing recomputes the forward).  Leaves are read as they
    are now: after an optimizer step, as the step left them.  Answers are kept per node.

    >>> import torch
    >>> a = torch.ones(2, requires_grad=True)
    >>> b = torch.zeros(2, requires_grad=True)
    >>> y = (a * b.t()).sum()
    >>> Zeros({"b": b}).value(y.grad_fn).text
    'the result of MulBackward0, a product with b, which is all zeros'
    """

    def __init__(self, names: Mapping[str, torch.Tensor], *, saved: bool = True) -> None:
        self._saved = saved  # read saved operands (False: the structure and leaves only)
        self._names = {id(t): k for k, t in names.items()}
        self._refs = list(names.values())  # keeps the ids unique while this object lives
        self._memo: dict[Any, Zero | None] = {}

    def _name(self, t: torch.Tensor) -> str | None:
        return self._names.get(id(t))

    def value(self, node: Any) -> Zero | None:
        """Why the forward value of ``node`` (a node of the graph, ``None`` for an input without
        history) is all zeros; ``None`` when the graph does not show that it is."""
        if node is None:
            return None
        if node not in self._memo:
            self._memo[node] = None  # a cycle (never in autograd's graphs) ends here
            self._memo[node] = self._value(node)
        return self._memo[node]

    def _value(self, node: Any) -> Zero | None:
        leaf = leaf_tensor(node)
        if leaf is not None:
            if not all_zero(leaf):
                return None
            name = self._name(leaf) or f"a leaf tensor of shape {tuple(leaf.shape)}"
            return Zero(f"{name}, which is all zeros", (leaf,))
        op = row(op_name(node))
        kids = children(node)
        if op.keeps_zero:
            return self.value(kids[0][0]) if kids else None
        if not op.operands:
            return None
        for i, attr in enumerate(op.operands):  # an added input (a bias) must be zero too
            if not attr and (i >= len(kids) or self.value(kids[i][0]) is None):
                return None
        for j, attr in enumerate(op.operands):
            z = self.operand(node, j) if attr else None
            if z is not None:
                return Zero(f"the result of {node_class(node)}, a product with {z.text}",
                            z.leaves)
        return None

    def operand(self, node: Any, j: int) -> Zero | None:
        """Why operand ``j`` of the product ``node`` is all zeros, or ``None``."""
        kids = children(node)
        z = self.value(kids[j][0]) if j < len(kids) else None
        if z is not None:
            return z
        operands = row(op_name(node)).operands
        if not self._saved or j >= len(operands) or not operands[j]:
            return None
        v = saved_value(node, operands[j])
        if v is None or not all_zero(v):
            return None
        if not isinstance(v, torch.Tensor):
            return Zero("the constant 0", ())
        name = self._name(v)
        if name is not None:
            return Zero(f"{name}, which is all zeros", (v,) if v.requires_grad else ())
        if v.grad_fn is not None:
            return Zero(f"a value computed by {v.grad_fn.name()}, which is all zeros", ())
        if v.numel() == 1:
            return Zero("the constant 0", ())
        return Zero(f"a tensor without history of shape {tuple(v.shape)} (data, a mask or a "
                    f"constant), which is all zeros", ())

    def sent(self, node: Any, slot: int) -> Zero | None:
        """Why ``node`` sends an exact zero to its input ``slot``: it is a product and a factor
        of that input is all zeros; ``None`` otherwise."""
        for j in factors(op_name(node), slot):
            z = self.operand(node, j)
            if z is not None:
                return z
        return None

    def edges(self, graph: Graph) -> dict[tuple[int, int], Zero]:
        """``(node, input number) -> why``: every edge of ``graph`` along which a product sends
        an exact zero (it multiplies by an all-zero operand)."""
        out: dict[tuple[int, int], Zero] = {}
        for k, node in enumerate(graph.nodes):
            if not row(op_name(node)).operands:
                continue
            for slot, (child, _) in enumerate(children(node)):
                if child is not None:
                    z = self.sent(node, slot)
                    if z is not None:
                        out[(k, slot)] = z
        return out


def _children_first(root: Any) -> list[Any]:
    """The nodes below ``root`` (and ``root``), each after every node below it."""
    out, seen = [], {root}
    stack = [(root, iter(children(root)))]
    while stack:
        n, it = stack[-1]
        for c, _ in it:
            if c is not None and c not in seen:
                seen.add(c)
                stack.append((c, iter(children(c))))
                break
        else:
            stack.pop()
            out.append(n)
    return out


def forward_origin(node: Any, index: Any, *, hooked: bool = True) -> Any | None:
    """The node, at or below ``node``, whose forward output is the first non-finite value: its
    output is known to be infinite or NaN (a node saved it, as its own result or as an operand)
    and no node below it has such an output (``p * log(p)`` at ``p = 0``: the ``log``; a square
    root of a negative number deep in a model: the ``sqrt``, not the loss that inherited its
    NaN).  ``None`` when no saved value below ``node`` is non-finite.  ``index`` holds the
    graph's nodes: values from outside it (data) are left to :func:`bad_data`.  ``hooked``:
    whether to read values saved through saved-tensor hooks (see
    :func:`~gradarg.trace.nodes.saved`)."""
    order = _children_first(node)
    bad: set[Any] = set()
    for n in order:
        for _, _, val in saved_values([n], hooked=hooked):
            if (isinstance(val, torch.Tensor) and (val.is_floating_point() or val.is_complex())
                    and val.grad_fn in index and not finite(val)):
                bad.add(val.grad_fn)
    if not bad:
        return None
    below: dict[Any, bool] = {}  # a node strictly below has a non-finite output
    for n in order:
        below[n] = any(c is not None and (c in bad or below[c]) for c, _ in children(n))
    first, _ = walk(node)  # breadth first: the one nearest the output among the deepest
    return next((n for n in first if n in bad and not below[n]), None)


def bad_data(node: Any) -> str | None:
    """The saved attribute of ``node`` holding an input without history (data, a constant)
    that is not finite, or ``None``."""
    for _, attr, val in saved_values([node]):
        if (isinstance(val, torch.Tensor) and val.grad_fn is None and not val.requires_grad
                and not finite(val)):
            return attr
    return None
