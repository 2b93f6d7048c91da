"""The loss's first nodes, read once at each outermost ``backward()`` call by the modules that
judge a loss function's saved values (:data:`READERS`: :mod:`.selfmatch`, :mod:`.ctcblank`,
:mod:`.clampedparams`, :mod:`.kdscale`, :mod:`.crossterm`; the watch adds :class:`.bootstrap.Bootstrap`'s, which reads its recorder).

Each reader is registered for one node type (``"NllLossBackward0"``) and returns what it found
or ``None``; the latest finding of each is kept by the reader's name (:attr:`LossNodes.found`).
The nodes are the first :data:`FIRST` reached from the loss (``graph.nodes.first_nodes``),
read before the backward frees what they saved.

The upstream gradient given to ``backward()`` is read too (:mod:`.upstream`), with the
``grad_outputs`` of ``torch.autograd.grad`` calls (:mod:`.onesvjp`), and the
arguments of ``gaussian_nll_loss`` calls (:mod:`.gaussnll`).  The whole
graph is read once, at the block's first ``backward()``, by :data:`DEEP`'s readers
(:mod:`.sines`, :mod:`.residuals`, :mod:`.gridsample`, :mod:`.outputrelu`,
:mod:`.batchmix`, :mod:`.magwindow`, :mod:`.shiftedwindows`, :mod:`.zerogates`).

Imports :mod:`.patches`, its readers' modules and ``trace.graph`` only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..graph.nodes import Graph, first_nodes
from ..graph.values import tensors as _tensors
from . import (
    batchmix,
    clampedparams,
    crossterm,
    ctcblank,
    gaussnll,
    gridsample,
    kdscale,
    magwindow,
    onesvjp,
    outputrelu,
    patches,
    residuals,
    selfmatch,
    shiftedwindows,
    sines,
    upstream,
    zerogates,
)

__all__ = ["DEEP", "FIRST", "READERS", "LossNodes"]

FIRST = 24
"""Nodes read from the loss down (a reduction, a division and the loss function's own; a
symmetric contrastive loss reaches its logits' scale at about the fourteenth)."""


READERS: Mapping[str, tuple[str, Callable[[Any], Any]]] = {
    "selfmatch": (selfmatch.NODE, selfmatch.read), "ctc": (ctcblank.NODE, ctcblank.read),
    "clamped": (clampedparams.NODE, clampedparams.read), "kd": (kdscale.NODE, kdscale.read),
    "cross": (crossterm.NODE, crossterm.read)}
"""Readers of the loss's first nodes, by name: ``{name: (node type, read(node))}``."""

DEEP: Mapping[str, Callable[[Graph], Any]] = {"sines": sines.sine_factor,
                                              "residuals": residuals.residual_adds,
                                              "grid": gridsample.grid_outside,
                                              "outrelu": outputrelu.relu_of_output,
                                              "batchmix": batchmix.misaligned,
                                              "gated": magwindow.gated,
                                              "shifted": shiftedwindows.unmasked_shift,
                                              "zerogates": zerogates.zero_gates}
"""Readers of the whole graph, once, at the block's first ``backward()``: ``{name: read(graph)}``
(what the architecture does, the same at every step)."""


class LossNodes:
    """What the readers found at the last ``backward()`` that they found something in."""

    def __init__(self, readers: Mapping[str, tuple[str, Callable[[Any], Any]]] = READERS,
                 deep: Mapping[str, Callable[[Graph], Any]] = DEEP):
        self._readers, self._deep = dict(readers), dict(deep)
        self.found: dict[str, Any] = {}
        self._handles: list[Any] = []

    def attach(self) -> None:
        self._handles = [patches.register_backward_call_hook(self._called, outer=True),
                         patches.register_backward_gradient_hook(self._gradient, outer=True),
                         patches.register_gaussian_nll_hook(self._gaussian),
                         patches.register_grad_args_hook(self._grad_args)]

    def detach(self) -> list[Any]:
        handles, self._handles = self._handles, []
        return handles

    def _gradient(self, tensors: Any, grads: Any) -> None:
        """The upstream gradient given with the losses (:mod:`.upstream`), the latest kept."""
        if (seen := upstream.read(tensors, grads)) is not None:
            self.found["upstream"] = seen
        if (zero := onesvjp.read(tensors, grads, "backward()")) is not None:
            self.found["onesvjp"] = zero

    def _grad_args(self, args: Any, kwargs: Any) -> None:
        """A ``torch.autograd.grad`` call's outputs and grad_outputs (:mod:`.onesvjp`)."""
        outputs = kwargs.get("outputs", args[0] if args else None)
        given = kwargs.get("grad_outputs", args[2] if len(args) > 2 else None)
        if (zero := onesvjp.read(outputs, given, "torch.autograd.grad")) is not None:
            self.found["onesvjp"] = zero

    def _gaussian(self, args: Any, kwargs: Any) -> None:
        """A ``gaussian_nll_loss`` call's arguments (:mod:`.gaussnll`), the latest kept."""
        if (seen := gaussnll.read(args, kwargs)) is not None:
            self.found["gaussnll"] = seen

    def _called(self, tensors: Any) -> None:
        roots = [t.grad_fn for t in _tensors(tensors) if t.grad_fn is not None]
        if self._deep and roots:  # once: the block's first backward
            graph, deep, self._deep = Graph(*roots), self._deep, {}
            for name, read in deep.items():
                if (seen := read(graph)) is not None:
                    self.found[name] = seen
        for n in first_nodes(roots, FIRST):
            kind = type(n).__name__
            for name, (wanted, read) in self._readers.items():
                if kind == wanted and (seen := read(n)) is not None:
                    self.found[name] = seen
