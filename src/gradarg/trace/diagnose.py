"""Why is my ``.grad`` None, zero or NaN? One sentence, checked on the live graph.

:func:`why_no_grad` looks at the output's graph (``grad_fn.next_functions``, the tensors each
node saved) and, when the tensor is reachable and the saved tensors are still there, runs one
traced ``torch.autograd.grad`` pass with ``retain_graph=True`` (nothing is accumulated into any
``.grad``) to find where the cotangent became zero or NaN. After the caller's own
``backward()`` freed the saved tensors, it answers from ``.grad`` and the graph's structure
(which ``backward()`` leaves in place) and says what could not be checked.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import torch

from .._validate import check_tensor
from ..show.render import fmt
from .tracer import (
    _walk,
    dense_values,
    graph_freed,
    op_name,
    opaque_nodes,
    saved_names,
    trace_backward,
)

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["GradDiagnosis", "why_no_grad"]

Case = Literal[
    "integer-dtype", "inference-mode", "output-no-grad", "new-leaf", "requires-grad-false",
    "not-reachable", "unused-parameter", "non-leaf", "modified-in-place", "not-run",
    "nonfinite", "zero", "accumulated", "differs", "random-forward", "ok",
]
CASES: tuple[Case, ...] = (
    "integer-dtype", "inference-mode", "output-no-grad", "new-leaf", "requires-grad-false",
    "not-reachable", "unused-parameter", "non-leaf", "modified-in-place", "not-run",
    "nonfinite", "zero", "accumulated", "differs", "random-forward", "ok",
)


@dataclass(frozen=True)
class GradDiagnosis:
    """The answer of :func:`why_no_grad`.

    Attributes
    ----------
    case : str
        One of ``"integer-dtype"``, ``"inference-mode"``, ``"output-no-grad"``, ``"new-leaf"``,
        ``"requires-grad-false"``, ``"not-reachable"``, ``"unused-parameter"``, ``"non-leaf"``,
        ``"modified-in-place"``, ``"not-run"``, ``"nonfinite"``, ``"zero"``, ``"accumulated"``,
        ``"differs"``, ``"ok"``.
    message : str
        One sentence saying what holds and what to do.
    node : str or None
        The node concerned: where the path was cut, where the cotangent became zero, or where
        NaN/Inf first appeared (a label as in :func:`gradarg.trace_backward`).
    gradient : torch.Tensor or None
        The gradient one backward pass gives the tensor, when it could be computed.
    """

    case: Case
    message: str
    node: str | None = None
    gradient: torch.Tensor | None = None

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"GradDiagnosis({self.case!r}): {self.message}"

    def _repr_html_(self) -> str:
        import html

        return (f'<p class="gradarg-diagnosis"><code>{html.escape(self.case)}</code>: '
                f"{html.escape(self.message)}</p>")


def _same_storage(a: torch.Tensor, b: torch.Tensor) -> bool:
    try:
        return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr() != 0
    except RuntimeError:
        return False


def _constants(nodes) -> list[tuple[Any, str, Any]]:
    """``(node, attribute, value)`` for every saved input that does not require grad."""
    out = []
    for node in nodes:
        for attr in saved_names(node):
            if "result" in attr:
                continue
            try:
                val = getattr(node, attr)
            except RuntimeError:
                continue
            if (isinstance(val, torch.Tensor) and not val.requires_grad) or (isinstance(val, (int, float)) and not isinstance(val, bool)):
                out.append((node, attr, val))
    return out


def _cut(nodes, x: torch.Tensor, xname: str) -> tuple[str, str | None]:
    """What cut the path from ``x`` to the output, judged from the constants the graph holds."""
    consts = _constants(nodes)
    for node, _, val in consts:
        if isinstance(val, torch.Tensor) and _same_storage(val, x):
            return ((f"the graph holds {xname}'s memory as a constant in {node.name()}: the path "
                    f"was cut by .detach() or .data (or a NumPy round trip through "
                    f"torch.from_numpy); use {xname} itself"), node.name())
    for node, _, val in consts:
        if (isinstance(val, torch.Tensor) and not (val.is_floating_point() or val.is_complex())
                and val.numel() == x.numel() and val.numel() > 1):
            return ((f"{node.name()} takes an integer tensor ({val.dtype}) with {xname}'s size: "
                    f"a cast to an integer dtype (.long(), .int(), .round().long()) cut the "
                    f"path; integer tensors carry no gradient"), node.name())
    for node, _, val in consts:
        if (isinstance(val, torch.Tensor) and val.shape == x.shape and val.numel() > 1
                and val.dtype == x.dtype and torch.equal(val, x.detach())):
            return ((f"{node.name()} takes a copy of {xname}'s values that has no graph "
                    f"(torch.tensor(x.tolist()), a NumPy round trip, .detach().clone()): "
                    f"compute with {xname} itself"), node.name())
    if x.numel() == 1:
        xv = x.detach().reshape(()).item()
        for node, _, val in consts:
            num = val.item() if isinstance(val, torch.Tensor) and val.numel() == 1 else val
            if isinstance(num, (int, float)) and num == xv:
                return ((f"{node.name()} uses {xname}'s value {fmt(xv)} as a plain number: "
                        f".item() or float() cut the path; keep it a tensor"), node.name())
    return ((f"nothing in the output's graph comes from {xname}: between them the path was cut "
            f"(by .detach(), .data, .item()/NumPy, torch.no_grad(), or an integer cast)"), None)


def _zero_node(trace, target_key: int) -> str | None:
    """The first node (execution order) on a path to the target that received a nonzero
    cotangent and sent only zeros towards the target."""
    import networkx as nx  # imported when used: import gradarg stays light
    g = nx.DiGraph((e.src, e.dst) for e in trace.edges)
    g.add_node(target_key)
    towards = nx.ancestors(g, target_key) | {target_key}
    for n in trace.executed:
        if n.key not in towards or n.key == target_key:
            continue
        got = n.arrived
        if got is None or not bool((dense_values(got) != 0).any()):
            continue
        outs = [e.cotangent for e in trace.edges if e.src == n.key and e.dst in towards]
        if outs and all(t is None or not bool((dense_values(t) != 0).any()) for t in outs):
            return n.label
    return None


_ZERO_DERIV = {"round", "floor", "ceil", "sign", "sgn", "trunc"}
_SINGULAR = {"sqrt", "rsqrt", "log", "log2", "log10", "log1p", "div", "pow", "reciprocal",
             "acos", "asin", "atanh", "atan2", "norm", "linalg_vector_norm", "std", "var",
             "cdist", "xlogy", "sqrt_"}
_STEP_FIX = ("a step function has derivative zero almost everywhere: if the rounding is "
             "meant, a straight-through estimator (x + (x.round() - x).detach()) keeps its "
             "values and passes the gradient")


def _cls(node: Any) -> str:
    return node.name().rsplit("::", 1)[-1]


def _saved_tensors(nodes):
    """``(node, attribute, tensor)`` for every saved tensor that can still be read."""
    for node in nodes:
        for attr in saved_names(node):
            try:
                val = getattr(node, attr)
            except RuntimeError:
                continue
            if isinstance(val, torch.Tensor):
                yield node, attr, val


def _graph(nodes, index) -> nx.DiGraph:
    import networkx as nx  # imported when used: import gradarg stays light
    g = nx.DiGraph()
    g.add_nodes_from(range(len(nodes)))
    g.add_edges_from((i, index[c]) for i, n in enumerate(nodes) for c, _ in n.next_functions
                     if c is not None)
    return g


def _on_path(g: nx.DiGraph, key: int) -> set[int]:
    """Nodes on some path from the output's node (0) to ``key``."""
    import networkx as nx  # imported when used: import gradarg stays light
    return (nx.ancestors(g, key) | {key}) & (nx.descendants(g, 0) | {0})


def _cut_by(g: nx.DiGraph, key: int, blocked: set[int]) -> bool:
    """Whether every path from the output's node to ``key`` passes through ``blocked``."""
    import networkx as nx  # imported when used: import gradarg stays light
    if 0 in blocked:
        return True
    h = g.subgraph(set(g) - blocked)
    return key not in h or not nx.has_path(h, 0, key)


def _stats(t: torch.Tensor) -> tuple[int, int, int]:
    """``(entries stored, non-finite, nonzero)`` of a gradient (sparse: its stored values)."""
    vals = dense_values(t.detach())
    fin = torch.isfinite(vals)
    return vals.numel(), int((~fin).sum()), int(vals.ne(0).sum())


def _flat(t: torch.Tensor) -> torch.Tensor:
    t = t.detach()
    t = t.to_dense() if t.layout != torch.strided else t
    return t.reshape(-1).to(torch.complex128 if t.is_complex() else torch.float64)


def _compare(current: torch.Tensor, grad: torch.Tensor, tensor: torch.Tensor, xname: str):
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


def _forward_origin(node: Any, index: dict[Any, int]) -> Any | None:
    """The node whose forward output first became non-finite among the saved values that
    ``node``'s backward multiplies by (``p * log(p)`` at ``p = 0``: the ``log``); ``None`` if
    ``node``'s saved values are finite."""
    seen, current, origin = set(), node, None
    while current is not None and current not in seen:
        seen.add(current)
        nxt = None
        for attr in saved_names(current):
            try:
                val = getattr(current, attr)
            except RuntimeError:
                continue
            if (isinstance(val, torch.Tensor) and (val.is_floating_point() or val.is_complex())
                    and not bool(torch.isfinite(dense_values(val.detach())).all())):
                src = val.grad_fn
                if src is not None and src in index and src is not current:
                    nxt = src
                    break
                if src is current:  # its own result: it made the value
                    return current
        if nxt is None:
            return origin
        origin = current = nxt
    return origin


def _module_of(name: str, module: torch.nn.Module | None):
    if module is None or "." not in name:
        return None, None
    sub = name.rsplit(".", 1)[0]
    try:
        return sub, module.get_submodule(sub)
    except AttributeError:
        return None, None


def why_no_grad(
    output: torch.Tensor | Callable[[], torch.Tensor],
    tensor: torch.Tensor,
    *,
    gradient: Any = None,
    names: Mapping[str, torch.Tensor] | None = None,
    module: torch.nn.Module | None = None,
) -> GradDiagnosis:
    """Say why ``tensor.grad`` is None, zero or NaN, before or after ``output.backward()``.

    Works from what is there: the graph's structure (``grad_fn`` and ``next_functions``, which
    outlive ``backward()``), the saved tensors (freed by ``backward()`` unless
    ``retain_graph=True``), ``.grad``, ``requires_grad``, ``is_leaf`` and grad mode. While the
    saved tensors are there, one traced ``torch.autograd.grad`` pass (``retain_graph=True``,
    nothing accumulated) finds the node where the gradient became zero or non-finite; after
    ``backward()`` the diagnosis is read from ``.grad`` and the structure, and the message says
    what could not be checked.

    Parameters
    ----------
    output : torch.Tensor or callable
        The tensor ``backward`` is (or was) called on, or a function of no arguments that
        recomputes it (``lambda: loss_fn(model(x), y)``).  A function is called twice, under
        ``torch.random.fork_rng`` (your random state is left as it was): when the two
        results differ, the forward is random (dropout in training mode, random
        augmentation), and ``.grad`` from an earlier step is not compared with a pass of the
        recomputed graph (``"random-forward"``).  Each call is an ordinary forward: it
        updates what a forward updates (batch-norm running statistics in training mode).
    tensor : torch.Tensor
        The tensor whose ``.grad`` is in question.
    gradient : torch.Tensor or number, optional
        The upstream gradient ``v``; default 1 for one-element outputs, ones otherwise.
    names : dict, optional
        Names used in the message (``{"w": w, "h": h}``).
    module : torch.nn.Module, optional
        The model: its parameters are named as in ``named_parameters()``, and a parameter
        absent from the graph is reported with its module when none of that module's
        parameters is in the graph either (a module never used in the forward).

    Returns
    -------
    GradDiagnosis
        ``case``, a one-sentence ``message``, the ``node`` concerned and the ``gradient`` one
        pass gives ``tensor`` (when it could be computed). Checked in this order: integer dtype,
        created under ``inference_mode``, output without a graph (``"output-no-grad"``) or
        itself a new leaf cut from the computation (``"new-leaf"``), ``requires_grad=False``,
        not in the output's graph (``"not-reachable"``, with what cut the path when the graph
        shows it; ``"unused-parameter"``), a non-leaf without ``retain_grad()``, a saved tensor
        modified in place, NaN/Inf (``"nonfinite"``: the node where it starts), exactly zero
        (``"zero"``: where the cotangent became zero, e.g. a dead ReLU), ``.grad`` not filled
        (``"not-run"``), ``.grad`` unlike one pass (``"accumulated"`` when it is exactly k
        passes, ``"differs"`` otherwise, with what the difference is consistent with), fine
        (``"ok"``).

    Raises
    ------
    TypeError
        ``output``, ``tensor`` or a value of ``names`` is not a tensor; ``names`` is not a
        mapping; ``module`` is not a ``torch.nn.Module``.

    Notes
    -----
    Nothing is changed: the traced pass uses ``torch.autograd.grad`` with ``retain_graph=True``
    and removes its hooks. Sparse gradients (``nn.Embedding(sparse=True)``) are checked through
    their stored values. Leaves and ``retain_grad``:
    https://pytorch.org/docs/stable/generated/torch.Tensor.retain_grad.html; what
    ``backward()`` frees: https://pytorch.org/docs/stable/autograd.html#saved-tensors

    Examples
    --------
    >>> import torch
    >>> w = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> h = w * 3
    >>> y = (h ** 2).sum()
    >>> why_no_grad(y, h, names={"h": h}).case
    'non-leaf'
    >>> why_no_grad(y, w.detach() * 0 + 1).case
    'requires-grad-false'

    After the user's own ``backward()`` the answer comes from ``.grad`` and the graph:

    >>> x = torch.tensor([0.0, 4.0], requires_grad=True)
    >>> y = torch.sqrt(x).sum()
    >>> y.backward()
    >>> d = why_no_grad(y, x, names={"x": x})
    >>> d.case, "sqrt" in d.message, "recompute" in d.message
    ('nonfinite', True, True)

    A loss rebuilt from its value is a new leaf, cut from the computation:

    >>> loss = torch.tensor(y.item(), requires_grad=True)
    >>> why_no_grad(loss, x).case
    'new-leaf'
    """
    random_forward = None
    if callable(output) and not isinstance(output, torch.Tensor):
        with torch.random.fork_rng():
            first, second = output(), output()
        check_tensor("output()", first)
        if isinstance(second, torch.Tensor) and not torch.equal(first.detach(),
                                                                 second.detach()):
            random_forward = ("two calls of the function you passed gave different outputs "
                              "(run under torch.random.fork_rng: your random state is as it "
                              "was)")
        output = first
    check_tensor("output", output)
    check_tensor("tensor", tensor)
    if module is not None and not isinstance(module, torch.nn.Module):
        raise TypeError(f"module must be a torch.nn.Module, got {type(module).__name__}")
    if names is not None and not isinstance(names, Mapping):
        raise TypeError(f"names must be a mapping of str to tensors, got {type(names).__name__}")
    names = dict(names or {})
    for k, t in names.items():
        check_tensor(f"names[{k!r}]", t)
    if module is not None:
        for k, p in module.named_parameters():
            names.setdefault(k, p)
    xname = next((k for k, t in names.items() if t is tensor), "tensor")
    oname = next((k for k, t in names.items() if t is output), "output")

    if not (tensor.is_floating_point() or tensor.is_complex()):
        return GradDiagnosis("integer-dtype", (
            f"{xname} has dtype {tensor.dtype}: only floating and complex tensors can require "
            f"grad, so it never gets a .grad; make it floating before the computation "
            f"(e.g. .float()) and keep integer casts out of the path"))
    if tensor.is_inference():
        return GradDiagnosis("inference-mode", (
            f"{xname} was created under torch.inference_mode(): inference tensors never record "
            f"a graph; create it outside inference_mode (or clone it there)"))
    if output.grad_fn is None and output is not tensor:
        return _no_graph(output, tensor, names, xname, oname)

    nodes, index = (_walk(output.grad_fn) if output.grad_fn is not None else ([], {}))
    if not tensor.requires_grad:
        for node in nodes:
            var = getattr(node, "variable", None)
            if var is not None and _same_storage(var, tensor):
                return GradDiagnosis("requires-grad-false", (
                    f"{xname} does not require grad: it shares memory with a leaf of the graph, "
                    f"so it is a .detach()/.data alias of it; that leaf gets the .grad"))
        node = next((n.name() for n, _, val in _constants(nodes)
                     if isinstance(val, torch.Tensor) and _same_storage(val, tensor)), None)
        extra = f" ({node} takes it as a constant)" if node is not None else ""
        return GradDiagnosis("requires-grad-false", (
            f"{xname} has requires_grad=False, so autograd never tracks it{extra}: create it "
            f"with requires_grad=True or call {xname}.requires_grad_() before using it"), node)
    if output is tensor:
        return GradDiagnosis("ok", (
            f"{xname} is the output itself: backward() gives it the upstream gradient"))

    freed = graph_freed(nodes) is not None
    if tensor.grad_fn is None:
        key = next((k for k, n in enumerate(nodes) if getattr(n, "variable", None) is tensor),
                   None)
    else:
        key = index.get(tensor.grad_fn)
    if key is None:
        return _not_reachable(nodes, index, tensor, xname, oname, names, module, freed)
    if tensor.grad_fn is not None and not tensor.retains_grad:
        return GradDiagnosis("non-leaf", (
            f"{xname} is not a leaf (made by {tensor.grad_fn.name()}), and backward() fills "
            f".grad only for leaf tensors: call {xname}.retain_grad() before backward(), or "
            f"use torch.autograd.grad({oname}, {xname})"), tensor.grad_fn.name())
    if freed:
        # a backward that raised (an in-place edit of a saved tensor) freed what it ran before
        # the error; the version counters of what is still saved show the edit
        node = _modified_in_place(nodes)
        if node is not None:
            return GradDiagnosis("modified-in-place", (
                f"a tensor the backward pass needs (saved for {node}) was modified in place "
                f"after it was saved, so backward() stops with an error (the tensor's version "
                f"counter shows it): write the operation out of place (h = h + 1 instead of "
                f"h += 1) or clone before modifying"), node)
        return _from_structure(nodes, index, key, tensor, xname, oname)

    if gradient is None:
        gradient = torch.ones_like(output)
    try:
        trace = trace_backward(output, gradient, inputs=[tensor], names=names, use_grad=True,
                               retain_graph=True)
    except RuntimeError as err:
        if "modified by an inplace operation" in str(err):
            notes = " ".join(getattr(err, "__notes__", []))  # trace_backward names the node
            where = re.search(r"\((\w+Backward\d*)\)", notes) or re.search(
                r"output \d+ of (\w+)", str(err))
            node = where.group(1) if where else None
            at = f" (saved for {node})" if node else ""
            return GradDiagnosis("modified-in-place", (
                f"a tensor the backward pass needs{at} was modified in place after it was "
                f"saved, so the pass stops with an error: write the operation out of place "
                f"(h = h + 1 instead of h += 1) or clone before modifying"), node)
        if "freed" not in str(err):  # e.g. a custom Function's saved_tensors
            raise
        return _from_structure(nodes, index, key, tensor, xname, oname)
    if tensor.grad_fn is None:
        grad = trace.nodes[key].grad
    else:  # a non-leaf: what reached its node (the output itself: v)
        grad = trace.gradient if key == 0 else trace._incoming_sum(key)
    if grad is None:
        custom = _custom_on_path(nodes, index, key)
        if custom:
            return GradDiagnosis("zero", (
                f"{xname} is in {oname}'s graph but no gradient reaches it: the custom "
                f"Function {custom} returns None for it from backward() (so .grad stays "
                f"None); return a gradient for every input that requires grad"), custom)
        grad = torch.zeros_like(tensor)
    _, bad, nonzero = _stats(grad)
    if bad:
        return _nonfinite(trace, nodes, index, key, xname, grad)
    if not nonzero:
        return _zero(trace, nodes, key, xname, oname, grad)
    current = tensor.grad
    if current is None:
        return GradDiagnosis("not-run", (
            f"{xname} is reachable and one pass gives it a nonzero gradient, but its .grad is "
            f"None: backward() has not run since it was last reset (zero_grad(set_to_none=True)), "
            f"or inputs= left it out"), None, grad)
    diff = _compare(current, grad, tensor, xname)
    if diff is not None:
        random_forward = random_forward or _random_nodes(nodes)
        if random_forward:
            return GradDiagnosis("random-forward", (
                f"{xname}.grad differs from what one backward pass of {oname} gives, but the "
                f"forward is random: {random_forward}; a recomputed {oname} draws new random "
                f"values, so this comparison cannot tell clipping, accumulation or an edit "
                f"from a different draw: compare in eval() mode, or call torch.manual_seed(s) "
                f"before the step and again before recomputing"), None, grad)
        return GradDiagnosis(diff[0], diff[1], None, grad)
    return GradDiagnosis("ok", (
        f"{xname} is reachable from {oname} and its gradient is finite and nonzero"), None, grad)


_RANDOM = ("NativeDropoutBackward0", "FusedDropoutBackward0", "BernoulliBackward0",
           "BernoulliBackward1", "RreluWithNoiseBackward0", "NormalBackward0",
           "NormalBackward1", "NormalBackward2", "NormalBackward3")


def _random_nodes(nodes) -> str | None:
    """What in the graph shows a random forward: a dropout node, a random draw, or a factor
    saved as a dropout mask (0 and one value above 1, the ``1 / (1 - p)`` of dropout)."""
    for node in nodes:
        if _cls(node) in _RANDOM:
            return f"the graph holds {_cls(node)} (dropout in training mode, or a random draw)"
    for node, _, v in _saved_tensors(nodes):
        if _cls(node) == "MulBackward0" and not v.requires_grad and _is_mask(v):
            keep = float(v.max())
            if keep > 1:
                return (f"{_cls(node)} multiplies by a dropout mask (0 and {fmt(keep, 4)}, "
                        f"dropout in training mode)")
    return None


def _modified_in_place(nodes) -> str | None:
    """The first node (output side first) one of whose saved tensors was modified in place
    since it was saved: unpacking it raises torch's version-counter error.  Saved tensors a
    backward already freed are skipped."""
    for node in nodes:
        for attr in saved_names(node):
            try:
                getattr(node, attr)
            except RuntimeError as err:
                if "modified by an inplace operation" in str(err):
                    return node.name()
    return None


def _no_graph(output, tensor, names, xname, oname) -> GradDiagnosis:
    if output.is_inference():
        return GradDiagnosis("output-no-grad", (
            f"{oname} was computed under torch.inference_mode(): it has no graph, so no "
            f"backward pass leads from it to {xname}; compute it outside inference_mode "
            f"(torch.no_grad() or inference_mode belong to evaluation only)"))
    if output.requires_grad:
        return GradDiagnosis("new-leaf", (
            f"{oname} is a new leaf (requires_grad=True but no grad_fn): it was made from "
            f"values (torch.tensor(...), torch.from_numpy, a float) cut from the computation "
            f"that produced them, so backward() stops at {oname} and never reaches {xname}; "
            f"compute it with torch operations on the tensors themselves (torch.stack or "
            f"torch.cat to combine losses, not torch.tensor([...]))"))
    facts = []
    if not torch.is_grad_enabled():
        facts.append("grad mode is off right now (inside torch.no_grad() or after "
                     "torch.set_grad_enabled(False))")
    if tensor.requires_grad and tensor.is_leaf:
        facts.append(f"{xname} requires grad now: if {xname}.requires_grad_() came after the "
                     f"forward, set it before")
    with_graph = [k for k, t in names.items() if t is not output and t.grad_fn is not None]
    if with_graph:
        facts.append(f"{', '.join(with_graph[:3])} has a graph and {oname} has none: the path "
                     f"was cut between them")
    seen = "".join(f"; {f}" for f in facts)
    return GradDiagnosis("output-no-grad", (
        f"{oname} has no graph (requires_grad=False, no grad_fn), so no backward pass leads "
        f"from it to {xname}: it was computed under torch.no_grad(), or only from tensors "
        f"without history (.detach(), .data, .item() or NumPy, integer results such as argmax "
        f"or .long(), torch.tensor([...]) of other tensors, gradients from "
        f"torch.autograd.grad without create_graph=True as in a gradient penalty){seen}"))


def _not_reachable(nodes, index, tensor, xname, oname, names, module, freed) -> GradDiagnosis:
    for node, _, val in _saved_tensors(nodes):
        if val is tensor:
            return GradDiagnosis("not-reachable", (
                f"{xname} is not reachable from {oname}: {node.name()} holds {xname} itself "
                f"as a constant, so {xname} did not require grad when the forward ran: "
                f"requires_grad_() came after the forward; set it before and recompute"),
                node.name())
    opaque = opaque_nodes(nodes)
    if not freed:
        text, node = _cut(nodes, tensor, xname)
        if node is not None:
            return GradDiagnosis("not-reachable",
                                 f"{xname} is not reachable from {oname}: {text}", node)
        consts = _constants(nodes)
        for name, t in names.items():
            if t is tensor or t.grad_fn is None:
                continue
            hit = next((n for n, _, v in consts if isinstance(v, torch.Tensor)
                        and _same_storage(v, t)), None)
            if hit is not None:
                return GradDiagnosis("not-reachable", (
                    f"{xname} is not reachable from {oname}: {hit.name()} takes the memory of "
                    f"{name} (which has a graph) as a constant: {name} was detached on the way "
                    f"(.detach() or .data); use {name} itself"), hit.name())
    leaf_ids = {id(n.variable) for n in nodes if hasattr(n, "variable")}
    sub, mod = _module_of(xname, module)
    if mod is not None and not any(id(p) in leaf_ids for p in mod.parameters()) and not opaque:
        cut = _history_free(nodes, f"{sub}'s output", oname, names)
        return GradDiagnosis("unused-parameter", (
            f"{xname} is not in {oname}'s graph, and neither is any other parameter of module "
            f"{sub} ({type(mod).__name__}): {sub} did not take part in computing {oname} (its "
            f"forward was not called, or its output was cut before {oname} by .detach(), "
            f".data, NumPy or torch.no_grad()){cut}; if "
            f"it is meant to be unused, leave it out of the optimizer (DDP: "
            f"find_unused_parameters=True)"))
    if opaque:
        return GradDiagnosis("not-reachable", (
            f"{xname} is not a node of {oname}'s graph as hooks see it: the graph holds a "
            f"reentrant torch.utils.checkpoint region ({opaque[0]}) whose inside is rebuilt "
            f"in a backward pass of its own; if {xname} is used inside it, its .grad is filled "
            f"by backward() but cannot be traced (use_reentrant=False makes it visible)"),
            opaque[0])
    leaves = [n.variable for n in nodes if hasattr(n, "variable")]
    hint = ""
    if 0 < len(leaves) <= 3 and module is None and not freed:
        shapes = ", ".join(str(tuple(v.shape)) for v in leaves)
        hint = (f"; the graph's leaves are tensors of shape {shapes}, none of them {xname}: if "
                f"one of them was made from computed values (torch.tensor([...], "
                f"requires_grad=True), a NumPy copy), it is a new leaf that cut the path; "
                f"combine tensors with torch.stack or torch.cat instead")
    if freed:
        return GradDiagnosis("not-reachable", (
            f"{xname} is not in {oname}'s graph: the path from it was cut (.detach(), .data, "
            f".item()/NumPy, torch.no_grad(), an integer cast, requires_grad_() after the "
            f"forward) or it was not used; which node took it as a constant could not be "
            f"checked, because backward() freed the saved tensors: recompute {oname} and call "
            f"why_no_grad before backward(){hint}"))
    more = _history_free(nodes, xname, oname, names)
    return GradDiagnosis("not-reachable", (
        f"{xname} is not reachable from {oname}: {_cut(nodes, tensor, xname)[0]}{more}{hint}"))


def _history_free(nodes, what: str, oname: str, names: Mapping[str, Any] | None = None) -> str:
    """Where a value without history joins the graph: the junctions of :func:`_junctions`
    (input data and integer targets excluded), each with the module whose parameters take its
    result, if ``names`` holds them."""
    found = _junctions(nodes, names or {})
    if not found:
        # no cut value meets computed values: the graph's inputs without history are where
        # data enters (which is also where a value cut before the first parameter enters)
        consts = [(n.name(), tuple(v.shape)) for n, _, v in _saved_tensors(nodes)
                  if v.grad_fn is None and not v.requires_grad and v.is_floating_point()
                  and v.dim() > 0 and not _is_mask(v)]
        if not consts:
            return ""
        seen = ", ".join(f"{n} {s}" for n, s in dict(consts).items())
        return (f"; {oname}'s graph takes tensors without history only at {seen} (input "
                f"data, or values computed under torch.no_grad() or detached): if {what} "
                f"should reach {oname}, its path runs into one of these")
    shown = ", ".join(found[:3]) + (f" and {len(found) - 3} more" if len(found) > 3 else "")
    one = len(found) == 1
    return (f"; {'a value' if one else 'values'} without history (computed under "
            f"torch.no_grad(), detached, or made from NumPy) join{'s' if one else ''} "
            f"{oname}'s graph at {shown}: if {what} should reach {oname}, its path was cut "
            f"before {'there' if one else 'one of these'}")


def _junctions(nodes, names: Mapping[str, Any]) -> list[str]:
    """Nodes, output side first, where a tensor without history (an input of the node absent
    from ``next_functions``) meets a value computed from the model's input data: where a cut
    value rejoins the computation.  Not junctions: the layer that takes the input data itself
    (its other inputs are parameters only), integer inputs (targets, indices), scalars, and
    dropout masks (a saved factor holding only 0 and one other value)."""
    import networkx as nx  # imported when used: import gradarg stays light

    index = {n: k for k, n in enumerate(nodes)}
    g = _graph(nodes, index)
    if not nx.is_directed_acyclic_graph(g):
        return []
    # carries[k]: the value of node k depends on the model's input data (or on some other
    # value without history): an input outside the graph below it, or integer indices saved
    carries: dict[int, bool] = {}
    for k in reversed(list(nx.topological_sort(g))):
        n = nodes[k]
        if hasattr(n, "variable"):
            carries[k] = False
            continue
        here = any(c is None for c, _ in n.next_functions) or any(
            not (v.is_floating_point() or v.is_complex()) for _, _, v in _saved_tensors([n]))
        carries[k] = here or any(carries[c] for c in g.successors(k))
    by_id = {id(t): name for name, t in names.items()}
    found = []
    for k, n in enumerate(nodes):
        if hasattr(n, "variable") or not any(c is None for c, _ in n.next_functions):
            continue
        if not any(carries[c] for c in g.successors(k)):
            continue  # the first layer on the input data
        saved = [v for _, _, v in _saved_tensors([n]) if not v.requires_grad]
        if saved and all(v.dim() == 0 or _is_mask(v) or not v.is_floating_point()
                         for v in saved):
            continue
        shape = next((tuple(v.shape) for v in saved if v.dim() > 0), None)
        text = n.name() + (f" (a constant of shape {shape})" if shape else "")
        module = _consumer(g, nodes, k, by_id)
        found.append(text + (f", whose result goes into module '{module}'" if module else ""))
    return found


def _is_mask(v: torch.Tensor) -> bool:
    """A dropout mask: only 0 and one other value (``1 / (1 - p)``)."""
    if not v.is_floating_point() or v.numel() < 2:
        return False
    values = torch.unique(v.detach())
    return len(values) <= 2 and bool((values == 0).any())


def _consumer(g, nodes, k: int, by_id: Mapping[int, str]) -> str | None:
    """The module (from parameter names) of the nearest node on the output side of ``k`` that
    takes a parameter, directly or through at most two view nodes (``TBackward0``)."""
    if not by_id:
        return None
    seen, frontier = {k}, [k]
    while frontier:
        nxt = []
        for a in frontier:
            for p in g.predecessors(a):
                if p in seen:
                    continue
                seen.add(p)
                nxt.append(p)
                todo = [(c, 0) for c in g.successors(p)]
                while todo:
                    c, depth = todo.pop()
                    var = getattr(nodes[c], "variable", None)
                    if var is not None and id(var) in by_id:
                        name = by_id[id(var)]
                        return name.rsplit(".", 1)[0] if "." in name else "(the model itself)"
                    if depth < 2 and var is None and _cls(nodes[c]) in (
                            "TBackward0", "ViewBackward0", "ExpandBackward0"):
                        todo += [(cc, depth + 1) for cc in g.successors(c)]
        frontier = nxt
    return None


def _custom_on_path(nodes, index, key) -> str | None:
    path = _on_path(_graph(nodes, index), key)
    custom = [nodes[k].name() for k in sorted(path)
              if isinstance(nodes[k], torch.autograd.function.BackwardCFunction)]
    return custom[0] if custom else None


def _nonfinite(trace, nodes, index, key, xname, grad) -> GradDiagnosis:
    import networkx as nx  # imported when used: import gradarg stays light
    first = trace.first_nonfinite
    if first is None:
        return GradDiagnosis("nonfinite", f"{xname}'s gradient holds NaN or Inf", None, grad)
    live = nodes[first.key]
    g = _graph(nodes, index)
    above = nx.ancestors(g, first.key)
    where = [k for k in above if op_name(nodes[k]) == "where"]
    sent = next((t for t in first.grad_inputs if t is not None and not _finite_t(t)), None)
    got = first.arrived
    if where and sent is not None and got is not None and got.shape == sent.shape:
        bad = ~torch.isfinite(dense_values(sent)) if sent.layout != torch.strided else \
            ~torch.isfinite(sent)
        if sent.layout == torch.strided and bool((got[bad] == 0).all()):
            return GradDiagnosis("nonfinite", (
                f"{xname}'s gradient holds NaN: torch.where sends a zero cotangent into the "
                f"branch it did not take, and {first.label} ({first.grad_fn}) turns that 0 into "
                f"NaN (0 · inf: its derivative is infinite or undefined at those inputs); "
                f"masking the output is not enough, mask the input too (the double where): "
                f"safe = torch.where(cond, x, 1.0); torch.where(cond, torch.sqrt(safe), 0.0)"),
                first.label, grad)
    data = next((a for a in saved_names(live) if _bad_data(live, a)), None)
    if data is not None:
        return GradDiagnosis("nonfinite", (
            f"{xname}'s gradient holds NaN or Inf; it first appears at {first.label} "
            f"({first.grad_fn}), whose backward multiplies by a saved input without history "
            f"({data}) that holds NaN or Inf: the data (or a constant) is not finite; check it "
            f"with torch.isfinite(...).all() before the forward"), first.label, grad)
    origin = _forward_origin(live, index)
    if origin is not None and origin is not live:
        olabel = trace.nodes[index[origin]].label
        extra = (" (for p * log(p) use torch.special.xlogy(p, p), which is 0 at p = 0)"
                 if op_name(origin) == "log" and first.op == "mul" else "")
        return GradDiagnosis("nonfinite", (
            f"{xname}'s gradient holds NaN or Inf; it starts at {olabel} ({_cls(origin)}): its "
            f"forward value is already infinite or NaN there (e.g. log of 0), and the backward "
            f"of {first.label} ({first.grad_fn}) multiplies by that value; keep the input of "
            f"{olabel} away from that point (clamp(min=eps)){extra}"), olabel, grad)
    return GradDiagnosis("nonfinite", (
        f"{xname}'s gradient holds NaN or Inf; it first appears at {first.label} "
        f"({first.grad_fn}): a derivative is infinite there (sqrt at 0, log of 0, division by "
        f"0); keep the input away from that point, e.g. clamp(min=eps)"), first.label, grad)


def _bad_data(node: Any, attr: str) -> bool:
    try:
        val = getattr(node, attr)
    except RuntimeError:
        return False
    return (isinstance(val, torch.Tensor) and val.grad_fn is None and not val.requires_grad
            and not _finite_t(val))


def _finite_t(t: torch.Tensor) -> bool:
    if not (t.is_floating_point() or t.is_complex()):
        return True
    return bool(torch.isfinite(dense_values(t)).all())


def _zero(trace, nodes, key, xname, oname, grad) -> GradDiagnosis:
    where = _zero_node(trace, key)
    detail = ""
    if where is not None:
        node = next(n for n in trace.nodes if n.label == where)
        op = node.grad_fn
        if isinstance(nodes[node.key], torch.autograd.function.BackwardCFunction):
            none = any(t is None for t in node.grad_inputs)
            why = (f" (the custom Function {op}: its backward() "
                   + ("returns None for this input" if none else "returns zeros") + ")")
        elif "Relu" in op or "Threshold" in op:
            why = " (a ReLU whose inputs were all ≤ 0: a dead ReLU)"
        elif node.op in _ZERO_DERIV:
            why = f" ({node.op}: {_STEP_FIX})"
        else:
            why = ""
        detail = f"; the cotangent became zero at {where} ({op}){why}"
    return GradDiagnosis("zero", (
        f"{xname} is reachable from {oname} but its gradient is exactly zero{detail}"),
        where, grad)


def _mild_pow(node: Any) -> bool:
    """A ``pow`` with a constant exponent ≥ 1 (its derivative is finite everywhere)."""
    exp = getattr(node, "_saved_exponent", None) if "_saved_exponent" in saved_names(node) \
        else None
    return isinstance(exp, (int, float)) and exp >= 1


def _from_structure(nodes, index, key, tensor, xname, oname) -> GradDiagnosis:
    """After backward(): the answer from ``.grad`` and the graph's structure."""
    g = _graph(nodes, index)
    path = _on_path(g, key)
    ops = [op_name(nodes[k]) for k in sorted(path)]
    recompute = (f"which node did it could not be checked: backward() freed the saved tensors "
                 f"it needs; recompute {oname} and call why_no_grad before backward(), or "
                 f"trace it with gradarg.trace_backward")
    grad = tensor.grad
    if grad is None:
        custom = _custom_on_path(nodes, index, key)
        ran = (f"{xname} is in {oname}'s graph, and backward() has run through that graph "
               f"(its saved tensors are freed), yet {xname}.grad is None")
        if custom:
            return GradDiagnosis("zero", (
                f"{ran}: the path passes through the custom Function {custom}, whose "
                f"backward() returning None for this input leaves .grad None (return a "
                f"gradient for every input that requires grad); the only other causes: .grad "
                f"was reset after the backward (zero_grad(set_to_none=True)), or "
                f"backward(inputs=...) left {xname} out"), custom)
        return GradDiagnosis("not-run", (
            f"{ran}: .grad was reset after that backward (zero_grad(set_to_none=True)), or "
            f"backward(inputs=...) left {xname} out"), None)
    total, bad, nonzero = _stats(grad)
    if bad:
        singular = sorted({op_name(nodes[k]) for k in path if op_name(nodes[k]) in _SINGULAR
                           and not _mild_pow(nodes[k])})
        hint = ""
        if "where" in ops and singular:
            hint = (f"; the path has torch.where above {', '.join(singular)}: where sends 0 "
                    f"into the branch not taken and 0 · inf = NaN there; the fix is the double "
                    f"where (mask the input too: torch.where(cond, x, 1.0) before the op)")
        elif singular:
            hint = (f"; the path passes through {', '.join(singular)}, whose derivative is "
                    f"infinite at some inputs (sqrt at 0, log of 0, division by 0)")
        return GradDiagnosis("nonfinite", (
            f"{xname}.grad holds NaN or Inf in {bad} of {total} entries{hint}; {recompute}"),
            None, grad)
    if not nonzero:
        steps = {k for k in path if op_name(nodes[k]) in _ZERO_DERIV}
        if steps and _cut_by(g, key, steps):
            op = op_name(nodes[min(steps)])
            return GradDiagnosis("zero", (
                f"{xname}.grad is exactly zero: every path from {oname} to {xname} passes "
                f"through {op} ({nodes[min(steps)].name()}), whose derivative is zero; "
                f"{_STEP_FIX}"), op)
        gates = sorted({o for o in ops if o in {"relu", "threshold", "where", "clamp",
                                                 "hardtanh", "masked_fill", "max", "min",
                                                 "index", "mul"}})
        hint = (f"; the path passes through {', '.join(gates)}, which can send zeros (a "
                f"ReLU whose inputs were all ≤ 0, a mask, a multiplication by 0)" if gates
                else "")
        return GradDiagnosis("zero", (
            f"{xname}.grad is exactly zero{hint}; {recompute}"))
    return GradDiagnosis("ok", (
        f"{xname}.grad is finite and nonzero ({nonzero} of {total} entries nonzero); whether "
        f"it holds exactly one backward pass (and not an accumulation or an edited .grad) "
        f"could not be checked: backward() freed the saved tensors; recompute {oname} and "
        f"ask again to compare"))
