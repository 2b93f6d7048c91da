"""Parameters a custom ``torch.autograd.Function`` left without a gradient: its ``backward``
returned None for the input their path goes through.

Observed at the end of each outermost ``backward()`` call that returned (:mod:`.patches`): a
watched parameter that requires grad and whose ``.grad`` is still None is looked for in the
graph of the tensors the call was given (the nodes' public ``next_functions``; the graph's
structure outlives its freed saved tensors).  A parameter in that graph receives at least a
zero gradient from any path whose nodes all return one; when none arrived, every path to it
returned None somewhere, and the custom Function nodes on those paths
(``torch.autograd.function.BackwardCFunction``) are the nodes whose ``backward`` may return
None for a differentiable input.  They are named; a parameter in the graph with no custom
Function on its paths is left to the other rules (no cause is stated without a node that
shows it).  Calls with ``backward(inputs=...)`` are not judged: they may leave a parameter out
on purpose.

Nothing is walked while every watched parameter holds a ``.grad`` after the call.

Imports nothing of the trace room but :mod:`.patches` and :mod:`..graph.nodes`.
"""

from __future__ import annotations

from typing import Any

import torch

from ..graph.nodes import Graph, accumulator, is_custom
from . import patches

__all__ = ["NoneReturned"]

MOST_NODES = 200_000
"""Largest graph walked after a ``backward()`` call (a larger one is not judged)."""


class NoneReturned:
    """Per watched parameter left without a gradient by a ``backward()`` call whose graph
    holds it: the names of the custom Function nodes on its paths (:attr:`found`, by the
    parameter's name, the last call's)."""

    def __init__(self, owner: dict[torch.Tensor, tuple[str, str]]):
        self._owner = owner  # parameter -> (name, module name), the watch's
        self.found: dict[str, list[str]] = {}
        self._roots: list[Any] = []
        self._judged = True  # False: the running call raised or was given inputs=
        self._handles: list[Any] = []

    def attach(self) -> None:
        self._handles = [patches.register_backward_call_hook(self._called, outer=True),
                         patches.register_backward_inputs_hook(self._inputs),
                         patches.register_backward_error_hook(self._raised),
                         patches.register_backward_done_hook(self._done, outer=True)]

    def detach(self) -> list[Any]:
        handles, self._handles = self._handles, []
        self._roots = []
        return handles

    # -- the backward() call ------------------------------------------------------------------
    def _called(self, tensors: Any) -> None:
        self._judged = True
        ts = [tensors] if isinstance(tensors, torch.Tensor) else list(tensors or ())
        self._roots = [t.grad_fn for t in ts
                       if isinstance(t, torch.Tensor) and t.grad_fn is not None]

    def _inputs(self, inputs: Any) -> None:
        self._judged = False

    def _raised(self, error: BaseException) -> None:
        self._judged = False

    def _done(self) -> None:
        roots, self._roots = self._roots, []
        if not (roots and self._judged):
            return
        missing = [(p, name) for p, (name, _) in self._owner.items()
                   if p.requires_grad and p.grad is None]
        if not missing:
            return
        ends: dict[Any, str] = {}
        for p, name in missing:
            try:
                ends[accumulator(p)] = name
            except RuntimeError:  # not a leaf that requires grad
                continue
        for name, customs in custom_on_paths(roots, ends).items():
            self.found[name] = customs


def custom_on_paths(roots: list[Any], ends: dict[Any, str]) -> dict[str, list[str]]:
    """For each node of ``ends`` (node -> key) reachable from ``roots``: the names of the
    custom Function nodes on a path from a root to it, in breadth-first order (an empty list
    when none is).  Graphs of more than :data:`MOST_NODES` nodes: ``{}``.

    Examples
    --------
    >>> class Drop(torch.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         return x * 1
    ...     @staticmethod
    ...     def backward(ctx, g):
    ...         return None
    >>> a = torch.ones(2, requires_grad=True)
    >>> loss = Drop.apply(a * 2).sum()
    >>> custom_on_paths([loss.grad_fn], {accumulator(a): "a"})
    {'a': ['DropBackward']}
    """
    graph = Graph(*roots)
    if len(graph.nodes) > MOST_NODES:
        return {}
    out: dict[str, list[str]] = {}
    for node, key in ends.items():
        k = graph.index.get(node)
        if k is not None:  # every node of the walk is below a root: its ancestors' customs
            out[key] = [graph.nodes[i].name() for i in sorted(graph.ancestors(k))
                        if is_custom(graph.nodes[i])]
    return out
