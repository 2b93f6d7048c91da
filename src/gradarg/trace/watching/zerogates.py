"""Branches multiplied by a gate that starts at zero or near it: a factor computed from one
parameter alone (``tanh(alpha)``, ``alpha``, a per-channel ``gamma``) whose entries are all
small at the block's first ``backward()``.  Flamingo's gated cross-attention adds
``tanh(alpha) * attn(x)`` with ``alpha = 0`` at initialisation (Alayrac et al. 2022), ReZero
adds ``alpha * f(x)`` with ``alpha = 0`` (Bachlechner et al. 2020), LayerScale multiplies each
branch by a ``gamma`` of 1e-5 or 1e-6 (Touvron et al. 2021, CaiT).  Everything before such a
gate gets its gradient scaled by the gate: exactly zero on the first step when the gate is 0,
then as small as the gate until it grows.  That is by design; it reads as a vanishing gradient.

Read once, from the graph of the block's first ``backward()`` (by
:class:`.lossnodes.LossNodes`, a whole-graph reader): ``MulBackward0`` nodes with one operand
computed from a single parameter by operations of one input (a ``tanh``, a view, an expand),
of at most :data:`MOST` entries, every one at most :data:`SMALL` in size, and the other operand
with history (the branch).

Imports ``trace.graph.nodes`` only.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import torch

from ..graph.nodes import Graph, leaf_tensor, node_class, saved_value, single_input_chain

__all__ = ["MOST", "SMALL", "ZeroGate", "zero_gates"]

MOST = 4096
"""Entries a gate may have (a scalar, one per channel)."""

SMALL = 1e-3
"""The largest entry of a factor read as a gate that starts small."""

_CHAIN = 6  # one-input operations walked down from the factor to its parameter


class ZeroGate(NamedTuple):
    """``param``: the gate's parameter; ``ops``: the one-input operations from it to the
    factor (``["tanh"]``, or empty); ``largest``: the factor's largest entry in size, at the
    first ``backward()``; ``gates``: how many such products the graph holds."""

    param: torch.Tensor
    ops: tuple[str, ...]
    largest: float
    gates: int


def _parameter_below(node: Any) -> tuple[torch.Tensor, tuple[str, ...]] | None:
    """The parameter ``node``'s value is computed from alone, through one-input operations,
    and their names (outermost first, views left out); ``None`` when there is none."""
    chain = single_input_chain(node, _CHAIN)
    if chain is None:
        return None
    leaf, ops = chain
    t = leaf_tensor(leaf)
    if not isinstance(t, torch.Tensor):
        return None
    names = (node_class(op).removesuffix("Backward0").removesuffix("Backward1").lower()
             for op in ops)
    return t, tuple(n for n in names
                    if n not in ("view", "expand", "unsqueeze", "reshapealias", "squeeze"))


def zero_gates(graph: Graph) -> ZeroGate | None:
    """The first product of the graph by a gate that is small in every entry, with the number
    of such products; ``None`` when there is none."""
    found: list[ZeroGate] = []
    for node in graph.nodes:
        if node_class(node) != "MulBackward0" or len(node.next_functions) != 2:
            continue
        sides = [c for c, _ in node.next_functions]
        for slot in (0, 1):
            gate, branch = sides[slot], sides[1 - slot]
            if gate is None or branch is None:
                continue
            below = _parameter_below(gate)
            factor = saved_value(node, ("_saved_self", "_saved_other")[slot], hooked=False)
            if below is None or not isinstance(factor, torch.Tensor) or not (
                    factor.is_floating_point() and 0 < factor.numel() <= MOST):
                continue
            largest = float(factor.detach().abs().max())
            if largest <= SMALL:
                found.append(ZeroGate(below[0], below[1], largest, 0))
                break
    if not found:
        return None
    return found[0]._replace(gates=len(found))
