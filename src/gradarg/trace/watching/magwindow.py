"""A parameter whose large entries get an exactly zero gradient: a window on its magnitude.

A straight-through estimator for ``sign(w)`` passes the gradient where ``|w| <= 1`` and cancels
it elsewhere (the derivative of ``hardtanh``; Courbariaux et al., 2016, "Binarized Neural
Networks"), as ``w.clamp(-c, c)`` and ``hardtanh`` in the forward do: entries beyond the
window get an exactly zero gradient, and, their gradient being zero, a step never brings them
back (latent weights drawn with ``randn`` and never clipped).  BNNs clip the latent weights to
the window after each step.

Seen here, from ``.grad`` and the parameter when the record is read: at least one entry in
twenty (and not all) of a floating-point parameter's gradient is exactly zero, and every such
entry is larger in magnitude than the entries whose gradient is not zero (all but two in a
hundred of them: the optimizer's step may have moved a few past the window since).  A zero gradient
on the small entries (pruning by magnitude) is not named: it is a choice.  The window is named
only where the graph shows one applied to the parameter itself (:func:`gated`, read once from
the block's first ``backward()`` by :class:`.lossnodes.LossNodes`): a clamp, ``hardtanh``, a
threshold, ``where``, ``masked_fill``, a product with a constant that holds zeros, or a custom
``autograd.Function``, with only views between it and the parameter.  A parameter normalised
in the forward (a quaternion ``q / |q|`` at ``(1, 0, 0, 0)``) also gets an exactly zero
gradient on its largest entries, along the direction the normalisation removes: no window.

Imports ``trace.graph.nodes`` and :mod:`.finding` only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import torch

from ..graph.nodes import MOVES, Graph, children, is_custom, leaf_tensor, node_class, saved_value
from .finding import Finding, Options, shown

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = ["Window", "gated", "magnitude_window", "window"]

SHARE = 0.05  # the least fraction of entries whose gradient is exactly zero
LEAST = 8  # and the least number of them
SLACK = 0.02  # the share of the others allowed past the window (moved by the step since)


class Window(NamedTuple):
    """``zero`` of ``n`` entries got an exactly zero gradient, all with ``|w| >= above``;
    ``inside`` of the others have ``|w| < above``."""

    zero: int
    n: int
    above: float
    inside: int


_GATES = frozenset({
    "ClampBackward0", "ClampBackward1", "ClampMinBackward0", "ClampMinBackward1",
    "ClampMaxBackward0", "ClampMaxBackward1", "HardtanhBackward0", "ThresholdBackward0",
    "ThresholdBackward1", "WhereBackward0", "MaskedFillBackward0", "MaskedFillBackward1"})


def _gate(node: Any) -> bool:
    """Whether ``node`` can cancel its input's gradient entry by entry (see the module)."""
    kind = node_class(node)
    if kind in _GATES or is_custom(node):
        return True
    if kind != "MulBackward0":
        return False
    return any(isinstance(m := saved_value(node, a, hooked=False), torch.Tensor)
               and not m.requires_grad and m.numel() > 1 and bool((m == 0).any())
               for a in ("_saved_self", "_saved_other"))


def gated(graph: Graph) -> frozenset[int]:
    """``id`` of the leaf tensors the graph feeds straight into a gate (see the module):
    the gate's input is the leaf, or a view of it."""
    found = set()
    for node in graph.nodes:
        if not _gate(node):
            continue
        todo = [(c, 0) for c, _ in children(node) if c is not None]
        while todo:
            c, depth = todo.pop()
            if (t := leaf_tensor(c)) is not None:
                found.add(id(t))
            elif node_class(c) in MOVES and depth < 4:
                todo.extend((k, depth + 1) for k, _ in children(c) if k is not None)
    return frozenset(found)


def window(p: torch.Tensor, g: torch.Tensor | None) -> Window | None:
    """The magnitude window of ``p`` read from its gradient ``g``, or None."""
    if g is None or g.layout != torch.strided or p.layout != torch.strided \
            or not p.is_floating_point() or g.shape != p.shape or p.numel() < 2 * LEAST:
        return None
    with torch.no_grad():
        zero = g == 0
        k = int(zero.sum())
        if k < max(LEAST, SHARE * p.numel()) or k == p.numel() or not bool(g.isfinite().all()):
            return None
        size = p.detach().abs()
        above = float(size[zero].min())
        inside = int((size[~zero] < above).sum())  # a step may have moved a few past it
    return Window(k, p.numel(), above, inside) if inside >= (1 - SLACK) * (p.numel() - k) \
        else None


def magnitude_window(w: GradWatch, o: Options) -> Finding:
    """Parameters whose entries beyond a magnitude got an exactly zero gradient (a problem)."""
    gates = w.lossnodes.found.get("gated", frozenset())
    found = [(name, win) for p, (name, _) in w.watched.owner.items()
             if p.requires_grad and id(p) in gates and (win := window(p, p.grad)) is not None]
    if not found:
        return Finding("magnitude window", True)
    name, win = found[0]
    more = f"; also {shown([n for n, _ in found[1:]], 3)}" if len(found) > 1 else ""
    return Finding("magnitude window", True, (
        f"{win.zero} of {win.n} entries of {name} got an exactly zero gradient, and they are "
        f"its largest: every one has |w| >= {win.above:.3g}, and {win.inside} of the "
        f"{win.n - win.zero} entries with a nonzero gradient are below that (observed: .grad "
        f"and the weights when read, and the graph feeds {name} itself into an operation "
        f"that can cancel a gradient entry by entry): a window on the weights' magnitude "
        f"cancels their gradient (a clamp or hardtanh, a straight-through estimator passing "
        f"|w| <= 1), so they never move; clip the weights "
        f"into the window after each step (BNNs clamp latent weights to [-1, 1]){more}"))
