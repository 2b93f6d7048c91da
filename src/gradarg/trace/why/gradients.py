"""What a gradient shows: its entries, how ``.grad`` differs from one backward pass, and where
in the graph a cotangent became NaN (where it became zero: :mod:`.zeroed`).  Read by the
diagnosis rules of :mod:`.causes`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import torch

from ...show.render import fmt
from ..graph.nodes import (
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
from ..graph.operators import factors, row
from ..graph.values import dense_values, finite
from .cuts import is_mask

__all__ = [
    "Zero", "Zeros", "bad_data", "compare", "custom_on_path", "edited", "forward_origin",
    "random_nodes", "stats", "through_views",
]


def stats(t: torch.Tensor) -> tuple[int, int, int]:
    """``(entries stored, non-finite, nonzero)`` of a gradient (sparse: its stored values)."""
    vals = dense_values(t.detach())
    fin = torch.isfinite(vals)
    return vals.numel(), int((~fin).sum()), int(vals.ne(0).sum())


def _flat(t: torch.Tensor) -> torch.Tensor:
    t = t.detach()
    if t.is_nested:  # the components' entries, one after the other
        t = dense_values(t)
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


def _recomputed_bad(node: Any, hooked: bool) -> bool:
    """Whether ``node``'s forward output, computed again from what it saved (its row's
    ``recompute``), holds NaN/Inf; ``False`` when it cannot be computed."""
    how = row(op_name(node)).recompute
    if not how:
        return False
    args = [saved_value(node, attr, hooked=hooked) for attr in how[1:]]
    if any(a is None for a in args):
        return False
    fn: Any = torch
    for part in how[0].split("."):  # "linalg.slogdet"
        fn = getattr(fn, part)
    with torch.no_grad():
        try:
            out = fn(*args)
        except (RuntimeError, TypeError):
            return False
    outs = out if isinstance(out, tuple) else (out,)  # slogdet: (sign, logabsdet)
    return any(isinstance(o, torch.Tensor) and o.is_floating_point() and not finite(o)
               for o in outs)


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
    :func:`~gradarg.trace.graph.nodes.saved`)."""
    order = _children_first(node)
    bad: set[Any] = set()
    for n in order:
        for _, _, val in saved_values([n], hooked=hooked):
            if (isinstance(val, torch.Tensor) and (val.is_floating_point() or val.is_complex())
                    and not finite(val)):
                if val.grad_fn in index:
                    bad.add(val.grad_fn)
                elif val.grad_fn is None and not val.requires_grad:
                    # non-finite data without history read by n (a NaN buffer): the values
                    # above n inherit it, so none of them is where it began (its own
                    # output may be freed, and nothing kept it)
                    bad.add(n)
    for n in order:  # an output no node kept (log of a negative number), computed again
        if n not in bad and _recomputed_bad(n, hooked):
            bad.add(n)
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


def through_views(node: Any) -> torch.Tensor | None:
    """The leaf tensor a node is, or is a view or copy of (``W.T``), else ``None``."""
    for _ in range(8):
        if node is None:
            return None
        leaf = leaf_tensor(node)
        if leaf is not None:
            return leaf
        if not row(op_name(node)).keeps_zero or not children(node):
            return None
        node = children(node)[0][0]
    return None


def _in_place_user(graph: Graph, made: tuple[Any, int], shape: str, now: int,
                   alive: Sequence[torch.Tensor]) -> Any | None:
    """The node that recorded an in-place edit of a saved tensor, the output ``made`` (``(node,
    output number)``): a tensor of the same ``shape`` at the version the error states, among
    the ``alive`` tensors (a module call's inputs, say) or readable from another node's saved
    values, whose history now ends at a node that takes ``made`` (an in-place operation gives
    the tensor it edits a new ``grad_fn`` and bumps its version; an out-of-place one makes a
    new tensor at version 0, and one under ``torch.no_grad()`` records no node).  ``None``
    when nothing shows it (values saved through hooks are not read)."""
    dims = [int(d) for d in shape.split(", ") if d]
    kept = (v for _, _, v in saved_values(graph.nodes, hooked=False))
    for t in (*alive, *kept):
        if (isinstance(t, torch.Tensor) and t.grad_fn is not None and t._version == now
                and list(t.shape) == dims and made in children(t.grad_fn)):
            return t.grad_fn
    return None


# what torch's CopySlices records: a write into part of a tensor, through indexing or a view
PART_WRITE = ("a write into part of it, which torch records as CopySlices: an assignment "
              "(h[0] = 0, h[:, 1:] = v) or an in-place method on a slice or view of "
              "it (h[1:3].mul_(2), h.view(-1).add_(1), index_put_ or masked_fill_ on a view)")
# torch names a node with its namespace when it has one ("output 0 of
# torch::autograd::CopySlices" after h[0] = 0): the name is read without it, as node_class does
_VERSIONS = re.compile(r"\[(?:torch\.)?(\w+) \[([\d, ]*)\]\]"
                       r"(?:, which is output (\d+) of (?:\w+::)*(\w+))?,? "
                       r"is at version (\d+); expected version (\d+)")


def edited(graph: Graph, names: Mapping[str, torch.Tensor], node: Any, attr: str,
           message: str, alive: Sequence[torch.Tensor] = ()) -> tuple[str, str]:
    """What torch's version-counter ``message`` (reading ``node``'s saved ``attr``) says was
    modified in place, in words, and the fix: a named leaf updated between forward and
    backward (an optimizer step), the output of a node and the operation of the graph that
    wrote into it (``CopySlices`` for ``h[:, 0] = 0``), or data.  ``alive``: tensors the
    caller still holds that the edited one may be among (the inputs of module calls)."""
    m = _VERSIONS.search(message)
    if m is None:
        return "", "write the operation out of place (h = h + 1 instead of h += 1) or clone first"
    _, shape, nr, producer, now, then = m.groups()
    # torch names only the last operation recorded on the tensor: with several edits since
    # it was saved, the earlier ones are not named, and the answer says how many there were
    times = int(now) - int(then)
    versions = f"at version {now} now, saved at version {then}" + (
        f" (edited in place {times} times since the node saved it)" if times > 1 else "")
    # a leaf (or a view of one, W.T: torch names the view's AsStrided) saved as an operand
    operands = row(op_name(node)).operands
    kids = children(node)
    leaf = None
    if attr in operands and operands.index(attr) < len(kids):
        leaf = through_views(kids[operands.index(attr)][0])
    if leaf is None and producer is None:
        leaf = next((t for t in graph.leaves() if t._version == int(now)
                     and list(t.shape) == [int(d) for d in shape.split(", ") if d]), None)
    if leaf is not None and leaf._version == int(now):
        name = next((k for k, t in names.items() if t is leaf),
                    f"a leaf of shape {list(leaf.shape)}")
        what = (f"{name}, a leaf, {versions}: it was updated in place between the forward and "
                f"the backward (an optimizer step, or an in-place update such as "
                f"{name}.add_(...) under torch.no_grad())")
        return what, ("call backward() before optimizer.step(), or compute the output again "
                      "after the update")
    out_of_place = ("write the edit out of place (h = h * mask, torch.where, h = h + 1) or "
                    "clone before editing")
    if producer is not None:
        # torch names the tensor's node by its forward operation ("Sigmoid" for
        # SigmoidBackward0): the node that saved it (its own output), one of its inputs (the
        # op that made it), or the in-place op recorded on that input since (its history then
        # ends there); other nodes of the same class elsewhere in the graph are not it
        made = re.compile(rf"{producer}(Backward\d*)?$")
        kid_nodes = [ch for ch, _ in children(node) if ch is not None]
        if made.match(node_class(node)) and attr == "_saved_result":
            source, edit = node, None
        else:
            source = next((ch for ch in kid_nodes if made.match(node_class(ch))), None)
            edit = None if source is not None else next(
                (n for n in graph.nodes if made.match(node_class(n))
                 and any(ch in kid_nodes for ch, _ in children(n))), None)
        last, after = (("the last of these edits is", "") if times > 1
                       else ("it was edited in place by", " after the node saved it"))
        if edit is not None:
            what = (f"a tensor of shape [{shape}] it took as input, {versions}: {last} "
                    f"{op_name(edit)} ({node_class(edit)}){after} (the in-place form of that "
                    f"operation: a method ending in _, or +=)")
            return what, out_of_place
        if source is None and attr != "_saved_result" and kid_nodes:
            # its history ends at an operation that is not the one that made it: an in-place
            # operation recorded on it since, whose result does not lead to the output
            named = (PART_WRITE if producer == "CopySlices" else
                     f"an operation torch names {producer} (its history now ends there)")
            what = (f"a tensor of shape [{shape}] it took as input, {versions}: {last} "
                    f"{named}, whose result does not lead to the output")
            return what, out_of_place
        cls = producer if source is None else f"{op_name(source)} ({node_class(source)})"
        users = [] if source is None else [
            n for n in graph.nodes if n is not node
            and any(ch is source and i == int(nr) for ch, i in children(n))]
        wrote = None if source is None else _in_place_user(graph, (source, int(nr)), shape,
                                                           int(now), alive)
        if wrote is not None:
            unused = ("" if wrote in users else "; its result does not lead to the output (no "
                      "operation of the graph reads it), but it edited the saved tensor")
            what = (f"the output of {cls} (shape [{shape}]), {versions}: {last} "
                    f"{op_name(wrote)} ({node_class(wrote)}){after} (the in-place form of that operation: a method ending in _, or -=, +=, *=; "
                    f"observed: a tensor of that shape still held, a module call's input or a "
                    f"value another node saved, is at version {now} and its history now ends "
                    f"at that {node_class(wrote)}){unused}")
            return what, out_of_place
        if any(node_class(n) == "CopySlices" for n in users):
            how = f"; it was written into in place: {PART_WRITE}"
        elif users:
            shown = ", ".join(dict.fromkeys(node_class(n) for n in users))
            how = (f"; the graph takes it into {shown}: if one of these is an in-place call "
                   f"(a method ending in _, such as masked_fill_ or clamp_, or +=), that call "
                   f"is the edit; if none is, the edit does not lead to the output (made "
                   f"under torch.no_grad(), or its result not used: an in-place method, or a "
                   f"write into part of it such as h[0] = 0 or h[1:].mul_(2))")
        else:
            how = ("; no operation of the graph wrote into it: the edit does not lead to the "
                   "output (made under torch.no_grad(), or its result not used: an in-place "
                   "method, or a write into part of it such as h[0] = 0 or h[1:].mul_(2))")
        if source is not None and attr != "_saved_result" and not how.startswith("; it was"):
            # torch names the last operation recorded on the tensor: the one that made it,
            # or an in-place edit of the same name since (mul after a * 2: mul_, *=)
            op = op_name(source)
            how += (f" (torch names {producer}, which made it: the last edit was either "
                    f"not recorded, or itself a {op} in place, {op}_, whose result does not "
                    f"lead to the output)")
        return f"the output of {cls} (shape [{shape}]), {versions}{how}", out_of_place
    what = (f"a tensor of shape [{shape}] without history (data or a constant), {versions}: "
            f"it was modified in place after the forward used it")
    return what, "clone it before editing, or compute the output again after the edit"
