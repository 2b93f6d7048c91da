"""A product that broadcasts a per-example tensor against the wrong dimensions of another:
``gamma * h`` with ``gamma`` of shape ``(N, C)`` and ``h`` of shape ``(N, C, H, W)``.

Broadcasting aligns shapes from the right
(https://docs.pytorch.org/docs/stable/notes/broadcasting.html), so ``(N, C)`` meets ``(H, W)``,
not ``(N, C)``: when the sizes happen to agree (a batch of 32 and 32 x 32 feature maps) nothing
raises, and ``gamma[i, j]`` scales row ``i``, column ``j`` of every channel of every example.
Each example's output then depends on the other examples' values: FiLM's scale and shift meant
per example and per channel need ``gamma[:, :, None, None]`` (shape ``(N, C, 1, 1)``).

Seen here, once per block, from the graph of its first ``backward()`` (by
:class:`.lossnodes.LossNodes`, while saved values are held): a ``MulBackward0`` whose two saved
operands both have history, have different numbers of dimensions and the same first size
``N > 1``, where the shorter one's first dimension lands on a later dimension of the longer one
(of size ``N`` too: that is how the broadcast succeeded); a Deep & Cross Network's ``x0 * (xl @
w)`` with ``xl @ w`` of shape ``(N,)`` and ``x0`` of ``(N, d)``, ``d == N``, is one.  An operand
without history (a mask, a constant) or one computed from a single parameter by operations of
one input (a learned bias or gate, sliced) is not read: neither has a batch dimension of its
own.  Not told apart: a ``(T, T)`` value with history (a bias computed from a
table) multiplied into ``(B, T, T)`` scores when ``B == T``; the text says "if both first
dimensions are the batch".

Imports ``trace.graph.nodes`` and :mod:`.finding` only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import torch

from ..graph.nodes import Graph, node_class, saved_value, single_input_chain
from .finding import Finding, Options

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = ["Mixed", "batch_mixed", "misaligned"]


class Mixed(NamedTuple):
    """Operands of shapes ``short`` and ``long`` of one product: ``short``'s first dimension
    (size ``n``) broadcast against dimension ``at`` of ``long``."""

    short: tuple[int, ...]
    long: tuple[int, ...]
    n: int
    at: int


def misaligned(graph: Graph) -> Mixed | None:
    """The first product of the graph that broadcasts a batch dimension onto another one."""
    for node in graph.nodes:
        if node_class(node) != "MulBackward0":
            continue
        a = saved_value(node, "_saved_self", hooked=False)
        b = saved_value(node, "_saved_other", hooked=False)
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
            continue
        if a.grad_fn is None or b.grad_fn is None or a.dim() == b.dim():
            continue
        short, long = (a, b) if a.dim() < b.dim() else (b, a)
        if single_input_chain(short.grad_fn, 16) is not None:  # a parameter, sliced, viewed
            continue
        at = long.dim() - short.dim()
        n = short.shape[0]
        if n > 1 and long.shape[0] == n and long.shape[at] == n:
            return Mixed(tuple(short.shape), tuple(long.shape), n, at)
    return None


def batch_mixed(w: GradWatch, o: Options) -> Finding:
    """The misaligned product, in words (a problem: examples mix)."""
    del o
    m: Mixed | None = w.lossnodes.found.get("batchmix")
    if m is None:
        return Finding("broadcast across examples", True)
    fixed = (*m.short, *(1,) * (len(m.long) - len(m.short)))
    index = ", ".join([":"] * len(m.short) + ["None"] * (len(m.long) - len(m.short)))
    return Finding("broadcast across examples", True, (
        f"a product broadcast an operand of shape {m.short} against one of shape {m.long}: "
        f"broadcasting aligns shapes from the right, so the first dimension of the first "
        f"(size {m.n}) meets dimension {m.at} of the second, not the second's first "
        f"dimension (also {m.n}); if both first dimensions are the batch, each example is "
        f"scaled by values of every example of the batch, so examples mix across the batch "
        f"(observed: the graph's saved operands); a per-example scale (a FiLM "
        f"conditioning's gamma or beta, a cross layer's x_l . w) needs shape {fixed}: x[{index}] or "
        f"x.view({', '.join(map(str, fixed))}), so that it broadcasts over the trailing "
        f"dimensions"))
