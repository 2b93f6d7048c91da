"""What a gradient shows: its entries, how ``.grad`` differs from one backward pass, and where
in the graph a cotangent became zero or NaN.  Read by the diagnosis rules of :mod:`.causes`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch

from ..show.render import fmt
from .cuts import is_mask
from .nodes import Graph, is_custom, node_class, op_name, saved_tensors, saved_values
from .operators import row
from .values import dense_values, finite

if TYPE_CHECKING:
    from .traced import BackwardTrace

__all__ = [
    "bad_data", "compare", "custom_on_path", "forward_origin", "random_nodes", "stats",
    "zero_node",
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


def zero_node(trace: BackwardTrace, graph: Graph, target_key: int) -> str | None:
    """The label of the first node (execution order) on a path to the target that received a
    nonzero cotangent and sent only zeros towards the target."""
    towards = graph.ancestors(target_key) | {target_key}
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


def forward_origin(node: Any, index: dict[Any, int]) -> Any | None:
    """The node whose forward output first became non-finite among the saved values that
    ``node``'s backward multiplies by (``p * log(p)`` at ``p = 0``: the ``log``); ``None`` if
    ``node``'s saved values are finite."""
    seen, current, origin = set(), node, None
    while current is not None and current not in seen:
        seen.add(current)
        nxt = None
        for _, _, val in saved_values([current]):
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


def bad_data(node: Any) -> str | None:
    """The saved attribute of ``node`` holding an input without history (data, a constant)
    that is not finite, or ``None``."""
    for _, attr, val in saved_values([node]):
        if (isinstance(val, torch.Tensor) and val.grad_fn is None and not val.requires_grad
                and not finite(val)):
            return attr
    return None
