"""Why is my ``.grad`` None, zero or NaN? One sentence, checked on the live graph.

:func:`why_no_grad` looks at the output's graph (``grad_fn.next_functions``, the tensors each
node saved) and, when the tensor is reachable, runs one traced ``torch.autograd.grad`` pass with
``retain_graph=True`` (nothing is accumulated into any ``.grad``) to find where the cotangent
became zero or NaN.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import networkx as nx
import torch

from .._validate import check_tensor
from ..show.render import fmt
from .tracer import _walk, saved_names, trace_backward

__all__ = ["GradDiagnosis", "why_no_grad"]

CASES = (
    "integer-dtype", "inference-mode", "output-no-grad", "requires-grad-false", "not-reachable",
    "non-leaf", "graph-freed", "modified-in-place", "not-run", "nonfinite", "zero", "accumulated", "ok",
)


@dataclass(frozen=True)
class GradDiagnosis:
    """The answer of :func:`why_no_grad`.

    Attributes
    ----------
    case : str
        One of ``"integer-dtype"``, ``"inference-mode"``, ``"output-no-grad"``,
        ``"requires-grad-false"``, ``"not-reachable"``, ``"non-leaf"``, ``"graph-freed"``,
        ``"modified-in-place"``, ``"not-run"``, ``"nonfinite"``, ``"zero"``, ``"accumulated"``, ``"ok"``.
    message : str
        One sentence saying what holds and what to do.
    node : str or None
        The node concerned: where the path was cut, where the cotangent became zero, or where
        NaN/Inf first appeared (a label as in :func:`gradarg.trace_backward`).
    gradient : torch.Tensor or None
        The gradient one backward pass gives the tensor, when it could be computed.
    """

    case: str
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
    g = nx.DiGraph((e.src, e.dst) for e in trace.edges)
    g.add_node(target_key)
    towards = nx.ancestors(g, target_key) | {target_key}
    for n in trace.executed:
        if n.key not in towards or n.key == target_key:
            continue
        got = n.arrived
        if got is None or not bool(got.any()):
            continue
        outs = [e.cotangent for e in trace.edges if e.src == n.key and e.dst in towards]
        if outs and all(t is None or not bool(t.any()) for t in outs):
            return n.label
    return None


def why_no_grad(
    output: torch.Tensor,
    tensor: torch.Tensor,
    *,
    gradient: Any = None,
    names: Mapping[str, torch.Tensor] | None = None,
) -> GradDiagnosis:
    """Say why ``tensor.grad`` is None, zero or NaN after ``output.backward(gradient)``.

    Parameters
    ----------
    output : torch.Tensor
        The tensor ``backward`` is (or was) called on.
    tensor : torch.Tensor
        The tensor whose ``.grad`` is in question.
    gradient : torch.Tensor or number, optional
        The upstream gradient ``v``; default 1 for one-element outputs, ones otherwise.
    names : dict, optional
        Names used in the message (``{"w": w, "h": h}``).

    Returns
    -------
    GradDiagnosis
        ``case``, a one-sentence ``message``, the ``node`` concerned and the ``gradient`` one
        pass gives ``tensor`` (when it could be computed). Checked in this order: integer dtype,
        created under ``inference_mode``, output without a graph, ``requires_grad=False``, not
        reachable from the output (with what cut the path when the graph shows it), a non-leaf
        without ``retain_grad()``, a graph already freed, a saved tensor modified in place, NaN/Inf (with the first node where it
        appears), exactly zero (with the node where the cotangent became zero, e.g. a dead
        ReLU), ``.grad`` not filled yet, ``.grad`` accumulated over several passes, fine.

    Raises
    ------
    TypeError
        ``output`` or ``tensor`` is not a tensor.

    Notes
    -----
    Nothing is changed: the traced pass uses ``torch.autograd.grad`` with ``retain_graph=True``
    and removes its hooks. Leaves and ``retain_grad``: https://pytorch.org/docs/stable/generated/torch.Tensor.retain_grad.html

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
    """
    check_tensor("output", output)
    check_tensor("tensor", tensor)
    xname = next((k for k, t in (names or {}).items() if t is tensor), "tensor")
    oname = next((k for k, t in (names or {}).items() if t is output), "output")

    if not (tensor.is_floating_point() or tensor.is_complex()):
        return GradDiagnosis("integer-dtype", (
            f"{xname} has dtype {tensor.dtype}: only floating and complex tensors can require "
            f"grad, so it never gets a .grad; make it floating before the computation "
            f"(e.g. .float()) and keep integer casts out of the path"))
    if tensor.is_inference():
        return GradDiagnosis("inference-mode", (
            f"{xname} was created under torch.inference_mode(): inference tensors never record "
            f"a graph; create it outside inference_mode (or clone it there)"))
    if not output.requires_grad or output.grad_fn is None:
        how = ("under torch.inference_mode()" if output.is_inference() else
               "under torch.no_grad(), or only from tensors that do not require grad "
               "(.detach(), .data, .item() and integer casts make such tensors)")
        return GradDiagnosis("output-no-grad", (
            f"{oname} has no graph (requires_grad=False): it was computed {how}, so no backward "
            f"pass leads from it to {xname}; compute it with gradients enabled"))

    nodes, index = _walk(output.grad_fn)
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

    if tensor.grad_fn is None:
        key = next((k for k, n in enumerate(nodes) if getattr(n, "variable", None) is tensor),
                   None)
    else:
        key = index.get(tensor.grad_fn)
    if key is None:
        text, node = _cut(nodes, tensor, xname)
        return GradDiagnosis("not-reachable",
                             f"{xname} is not reachable from {oname}: {text}", node)
    if tensor.grad_fn is not None and not tensor.retains_grad:
        return GradDiagnosis("non-leaf", (
            f"{xname} is not a leaf (made by {tensor.grad_fn.name()}), and backward() fills "
            f".grad only for leaf tensors: call {xname}.retain_grad() before backward(), or "
            f"use torch.autograd.grad({oname}, {xname})"), tensor.grad_fn.name())

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
        if "already freed" not in str(err):
            raise
        return GradDiagnosis("graph-freed", (
            f"{oname}'s graph was freed by an earlier backward(), so its cotangents cannot be "
            f"traced again; recompute {oname} (or pass retain_graph=True to that backward) and "
            f"ask again"), None, None)
    if tensor.grad_fn is None:
        grad = trace.nodes[key].grad
    else:  # a non-leaf: what reached its node (the output itself: v)
        grad = trace.gradient if key == 0 else trace._incoming_sum(key)
    if grad is None:
        grad = torch.zeros_like(tensor)
    if not bool(torch.isfinite(grad).all()):
        first = trace.first_nonfinite
        where = first.label if first is not None else None
        at = f"; it first appears at {where} ({first.grad_fn})" if first is not None else ""
        return GradDiagnosis("nonfinite", (
            f"{xname}'s gradient holds NaN or Inf{at}: a derivative is infinite there (sqrt "
            f"at 0, log of 0, division by 0); keep the input away from that point, e.g. "
            f"clamp(min=eps)"), where, grad)
    if not bool(grad.any()):
        where = _zero_node(trace, key)
        detail = ""
        if where is not None:
            op = next(n for n in trace.nodes if n.label == where).grad_fn
            dead = " (a ReLU whose inputs were all ≤ 0: a dead ReLU)" if "Relu" in op or \
                "Threshold" in op else ""
            detail = f"; the cotangent became zero at {where} ({op}){dead}"
        return GradDiagnosis("zero", (
            f"{xname} is reachable from {oname} but its gradient is exactly zero{detail}"),
            where, grad)
    current = tensor.grad
    if current is None:
        return GradDiagnosis("not-run", (
            f"{xname} is reachable and one pass gives it a nonzero gradient, but its .grad is "
            f"None: backward() has not run since it was last reset (zero_grad(set_to_none=True)), "
            f"or inputs= left it out"), None, grad)
    if current.shape == grad.shape and not torch.allclose(current, grad):
        ratio = float(current.double().norm() / grad.double().norm())
        return GradDiagnosis("accumulated", (
            f"{xname}.grad is not what one backward pass gives (its norm is {fmt(ratio, 3)} "
            f"times as large): .grad accumulates over backward() calls; call "
            f"optimizer.zero_grad() (or set {xname}.grad = None) before each backward"),
            None, grad)
    return GradDiagnosis("ok", (
        f"{xname} is reachable from {oname} and its gradient is finite and nonzero"), None, grad)
