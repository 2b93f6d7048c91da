"""Periodic activations of a scaled input, read once from the graph of a block's first
``backward()`` (by :class:`.lossnodes.LossNodes`, while the values the graph saved are held).

``sin(c * x)`` (SIREN's activation, Sitzmann et al., 2020, "Implicit Neural Representations with
Periodic Activation Functions", with ``c = omega_0 = 30``) has the derivative
``c * cos(c * x)``: each such layer multiplies the gradient by up to ``c`` on its way back, so
with weights at their default scale it grows about ``c`` times per layer; SIREN's
initialisation divides the weights after the first layer by ``c`` to keep it level.

Imports ``trace.graph.nodes`` and ``trace.graph.values`` only.
"""

from __future__ import annotations

from typing import NamedTuple

from ..graph.nodes import Graph, node_class, saved_value
from ..graph.values import number

__all__ = ["SineFactor", "sine_factor"]

_PERIODIC = ("SinBackward0", "CosBackward0")


class SineFactor(NamedTuple):
    """``times`` sine or cosine activations of an input scaled by a constant, the largest
    ``factor`` (absolute value, above 1)."""

    factor: float
    times: int


def sine_factor(graph: Graph) -> SineFactor | None:
    """The ``sin`` / ``cos`` nodes of ``graph`` whose input is a product with a constant of
    absolute value above 1 (a Python number or a one-entry tensor without gradient); ``None``:
    none."""
    best, times = 0.0, 0
    for n in graph.nodes:
        if node_class(n) not in _PERIODIC or not n.next_functions:
            continue
        m = n.next_functions[0][0]
        if node_class(m) not in ("MulBackward0", "MulBackward1"):
            continue
        for attr in ("_saved_other", "_saved_self"):
            c = number(saved_value(m, attr, hooked=False))
            if c is not None and abs(c) > 1:
                best, times = max(best, abs(c)), times + 1
                break
    return SineFactor(best, times) if times else None
