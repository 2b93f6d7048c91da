"""A loss that broadcast a tensor computed from the model's output across the batch: every
example compared with every other (a prediction of shape ``(N, 1)`` against a target of
shape ``(N,)`` gives ``(N, N)``), observed on the nodes between the model's output and the loss.

torch's own regression losses warn about it ("Using a target size ... that is different to the
input size") and :mod:`.lossforms` reads it from their nodes; a hand-written loss (a pinball
or quantile loss, ``(y - pred) ** 2`` written out) broadcasts silently.  Seen here: a forward
hook on the model keeps the autograd nodes of its outputs (and their shapes) until the next
``backward()``; at that call, the nodes from the losses down to those outputs (at most
:data:`MOST_NODES`) get a pre-hook (``torch.autograd.graph.Node.register_prehook``, public)
that notes the shape of the gradient each receives, which is its output's shape.  A node
whose output holds the batch size ``N`` (dimension 0 of the model's output) in two dimensions
while an input with a gradient is smaller, holds ``N`` in one dimension, and is
broadcast to the output (a dimension of size 1, or a missing one, stretched to ``N``) made the
every-example-with-every-other tensor, when the output holds ``N`` where the model's output
has another size (see :func:`_spread`).  A node with another input of the output's shape (a
row-wise ``x - x.max(1, keepdim=True)``) is a broadcast along a row, not across the batch, and
a matrix product (``mm``, ``matmul``...: a gradient penalty's double backward holds
``(N, 1) @ (1, D)``) contracts, it does not broadcast.  An input whose dimension of size 1 an
explicit ``unsqueeze`` (``x[None]``) made just before is paired with every row on purpose (all
pairs: FAPE's frames and atoms, a distance matrix): not named.

Imports nothing of the trace room but :mod:`.finding` and :mod:`.patches`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, NamedTuple

import torch

from . import patches
from .finding import Finding, Options

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = ["Broadcast", "LossShapes", "loss_broadcast"]

# products that contract a dimension: their output's shape is no broadcast of their inputs'
# (the double backward of a Linear, as a gradient penalty computes, holds (N, 1) @ (1, D))
_CONTRACTION = re.compile(r"^(Mm|Bmm|Addmm|Addbmm|Baddbmm|Addmv|Mv|Dot|Vdot|Matmul|Linear|"
                          r"Einsum|Convolution|Outer|Ger|Bilinear|Tensordot)Backward")

MOST_NODES = 64
"""Nodes between the losses and the model's outputs that are watched at a ``backward()``."""


class Broadcast(NamedTuple):
    """A node of the loss (``node``: its class name) whose input of shape ``small``, computed
    from the model's output, was broadcast to its output of shape ``big``; ``batch``: N."""

    node: str
    small: tuple[int, ...]
    big: tuple[int, ...]
    batch: int


def _tensors(out: Any) -> list[torch.Tensor]:
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, dict):
        out = list(out.values())
    if isinstance(out, (list, tuple)):
        return [t for o in out for t in _tensors(o)]
    return []


def _spread(small: tuple[int, ...], big: tuple[int, ...], n: int,
            out: tuple[int, ...]) -> bool:
    """Whether ``small`` broadcasts to ``big`` across the batch: right-aligned, each dimension
    equal or of size 1 (missing ones count as 1), ``n`` once in ``small`` and at least twice
    in ``big``, some dimension of size 1 stretched to ``n``, and ``n`` in a dimension of
    ``big`` where the model's output ``out`` (batch first) has another size or none (an
    output whose features number ``n`` too cannot tell a broadcast along its rows, as
    ``F.normalize``'s, from one across the batch: nothing is said)."""
    if len(small) > len(big) or big.count(n) < 2 or small.count(n) != 1:
        return False
    padded = (1,) * (len(big) - len(small)) + small
    if any(s not in (b, 1) for s, b in zip(padded, big, strict=True)):
        return False
    if not any(b == n and (p >= len(out) or out[p] != n) for p, b in enumerate(big)):
        return False
    return any(s == 1 and b == n for s, b in zip(padded, big, strict=True))


class LossShapes:
    """The model's output nodes of the calls since the last ``backward()``, and the first
    :class:`Broadcast` seen in a loss (:attr:`found`)."""

    def __init__(self, model: torch.nn.Module):
        self.model = model
        self.found: Broadcast | None = None
        self._outputs: dict[Any, tuple[int, ...]] = {}  # node -> its output's shape
        self._shape: tuple[int, ...] = ()  # the first output's shape, of the last call
        self._shapes: dict[Any, tuple[int, ...]] = {}  # node -> shape seen in this backward
        self._handles: list[Any] = []
        self._hooks: list[Any] = []

    def attach(self) -> None:
        self._handles = [self.model.register_forward_hook(patches.module_hook(self._returned)),
                         patches.register_backward_call_hook(self._called, outer=True),
                         patches.register_backward_done_hook(self._done, outer=True)]

    def detach(self) -> list[Any]:
        handles, self._handles = self._handles + self._hooks, []
        self._hooks, self._outputs, self._shapes = [], {}, {}
        return handles

    def _returned(self, module: Any, args: Any, out: Any) -> None:
        if patches.backward_depth():
            return  # a recomputation during a backward (checkpoint)
        for t in _tensors(out):
            if t.grad_fn is not None and t.dim() >= 1:
                self._outputs[t.grad_fn] = tuple(t.shape)
        first = next((t for t in _tensors(out) if t.dim() >= 1), None)
        if first is not None:
            self._shape = tuple(first.shape)

    def _called(self, tensors: Any) -> None:
        if self.found is not None or not self._outputs:
            return
        roots = [t.grad_fn for t in _tensors(tensors) if t.grad_fn is not None]
        todo, seen = list(roots), set(roots)
        while todo and len(seen) <= MOST_NODES:
            n = todo.pop()
            if n in self._outputs:
                continue
            self._hooks.append(n.register_prehook(self._noted(n)))
            for c, _ in n.next_functions:
                if c is not None and c not in seen:
                    seen.add(c)
                    todo.append(c)

    def _noted(self, node: Any):
        shapes = self._shapes

        def hook(grad_outputs: Any) -> None:
            g = grad_outputs[0] if grad_outputs else None
            if isinstance(g, torch.Tensor):
                shapes[node] = tuple(g.shape)

        return hook

    def _done(self) -> None:
        hooks, self._hooks = self._hooks, []
        for h in hooks:
            h.remove()
        shapes, self._shapes = self._shapes, {}
        outputs, self._outputs = self._outputs, {}
        out = self._shape
        n = out[0] if out else 0
        if self.found is not None or n < 2:
            return
        for node, big in shapes.items():
            if _CONTRACTION.search(type(node).__name__):
                continue  # (N, 1) @ (1, N) is a product, not a broadcast
            kids = [(c, s) for c, _ in node.next_functions if c is not None
                    for s in (shapes.get(c, outputs.get(c)),) if s is not None]
            sizes = [s for _, s in kids]
            if any(s == big for s in sizes):
                continue  # another input of the output's shape: a broadcast along rows
            # an input given its dimension of size 1 by an explicit unsqueeze (x[None]) is
            # paired with every row on purpose (all pairs of frames and atoms, a distance
            # matrix): not the (N, 1) against (N,) mistake
            small = next((s for c, s in kids if _spread(s, big, n, out)
                          and not type(c).__name__.startswith("UnsqueezeBackward")), None)
            if small is not None:
                self.found = Broadcast(type(node).__name__, small, big, n)
                return


def _shape(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def loss_broadcast(w: GradWatch, o: Options) -> Finding:
    """The first :class:`Broadcast` of the block, in words."""
    b = w.shapes.found
    if b is None or any(s.kind == "broadcast" for s in w.grads.losses.slips):  # loss_form
        return Finding("loss shapes", True)
    return Finding("loss shapes", True, (
        f"the loss broadcast a tensor of shape {_shape(b.small)}, computed from the model's "
        f"output, to {_shape(b.big)} at {b.node} (observed: the shapes of the gradients those "
        f"nodes received): with a batch of {b.batch}, every example was compared with every "
        f"other; a prediction of shape ({b.batch}, 1) against a target of shape "
        f"({b.batch},) does this: squeeze the prediction or unsqueeze the target"))
