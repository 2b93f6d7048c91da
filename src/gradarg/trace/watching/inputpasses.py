"""Backward passes taken for an input's gradient that also fill the parameters' ``.grad``.

A Langevin sampler, a PGD attack or a saliency map needs the gradient of the model's output
with respect to its input.  Written as ``out.backward()`` on an input leaf that requires grad,
each such pass also accumulates into every parameter's ``.grad`` (``Tensor.backward`` fills
the ``.grad`` of every leaf of the graph,
https://docs.pytorch.org/docs/stable/generated/torch.Tensor.backward.html), and the optimizer
step that follows reads their sum with the training loss's gradient.
``torch.autograd.grad(out, x)`` (or ``backward(inputs=[x])``) leaves the parameters alone.

Seen here: a forward pre-hook on the model keeps (weakly) the leaf tensors among its
arguments that require grad and are not the model's parameters, with the number of the call;
at the end of each outermost ``backward()`` call, a kept leaf whose ``.grad`` was None at its
call and is set now had it filled by that backward (:attr:`InputPasses.filled`, keyed by the
calls started by then, as the :class:`~.events.Note` of each pass of that backward counts
them).  :func:`summed` reads which of
the passes summed in each parameter's final ``.grad`` (:func:`.events.chain`) followed such a
call; :func:`input_passes` names them when at least two did and at least one did not (the
training loss's own pass): a loop of input-gradient passes before the step.  One such pass
(an attack's clean loss, often summed with the adversarial one on purpose) is not named.

Imports :mod:`.events`, :mod:`.finding` and :mod:`.patches` only.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any, NamedTuple

import torch

from . import events, patches
from .finding import Finding, Options

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = ["MOST_KEPT", "InputPasses", "Summed", "input_passes", "summed"]

MOST_KEPT = 64
"""Leaves awaiting a backward kept at most (the oldest are dropped)."""


class InputPasses:
    """Which calls of the model took an input leaf whose ``.grad`` a ``backward()`` filled.

    Attributes
    ----------
    filled : dict[int, tuple[int, ...]]
        Calls of the model started when a ``backward()`` ended (``watched.forwards``, as its
        passes' notes count them) -> the shape of an input leaf whose ``.grad`` it filled.
    """

    def __init__(self, model: torch.nn.Module, watched: Any):
        self.model, self.watched = model, watched
        self.filled: dict[int, tuple[int, ...]] = {}
        self._params = {id(p) for p in watched.owner}
        self._waiting: list[tuple[Any, int, tuple[int, ...]]] = []
        self._handles: list[Any] = []

    def attach(self) -> None:
        self._handles = [
            self.model.register_forward_pre_hook(patches.module_hook(
                patches.eager_unless_traced(self._called)), with_kwargs=True),
            patches.register_backward_done_hook(self._backward_done, outer=True)]

    def detach(self) -> list[Any]:
        handles, self._handles, self._waiting = self._handles, [], []
        return handles

    def _called(self, module: Any, args: Any, kwargs: Any) -> None:
        for a in (*args, *(kwargs or {}).values()):
            if (type(a) is torch.Tensor and a.requires_grad and a.grad_fn is None
                    and a.grad is None and id(a) not in self._params):
                self._waiting.append((weakref.ref(a), self.watched.forwards, tuple(a.shape)))
        del self._waiting[:-MOST_KEPT]

    def _backward_done(self) -> None:
        if not self._waiting:
            return
        still = []
        for ref, call, shape in self._waiting:
            t = ref()
            if t is None:
                continue
            if t.grad is not None:  # keyed as this backward's passes count the calls
                self.filled[self.watched.forwards] = shape
            else:
                still.append((ref, call, shape))
        self._waiting = still


class Summed(NamedTuple):
    """``inputs`` of the ``passes`` summed in the final ``.grad`` of ``params`` of the
    ``total`` parameters that received one followed a call whose input leaf (``shape``) had its
    ``.grad`` filled; ``read``: an optimizer step read that sum."""

    inputs: int
    passes: int
    params: int
    total: int
    shape: tuple[int, ...]
    read: bool


def summed(w: GradWatch) -> Summed | None:
    """The passes summed in the parameters' final ``.grad`` that were taken for an input's
    gradient, when at least two were and one was not (``None`` otherwise)."""
    filled = w.inputs.filled
    if len(filled) < 2:
        return None
    got = [r for r in w.parameters.values() if r.requires_grad and r.grad is not None]
    found: list[tuple[int, int, int, bool]] = []
    for r in got:
        c = events.chain(r.events)
        ins = [n.forward for n in c if n.forward in filled]
        if 2 <= len(ins) < len(c):
            last = max(i for i, n in enumerate(r.events) if n.kind == "pass")
            read = any(n.kind == "step" for n in r.events[last + 1:])
            found.append((len(ins), len(c), ins[-1], read))
    if not found:
        return None
    k, n, call, read = max(found)
    return Summed(k, n, len(found), len(got), filled[call], read)


def input_passes(w: GradWatch, o: Options) -> Finding:
    """Backward passes taken for an input's gradient summed into the parameters' ``.grad``."""
    s = summed(w)
    if s is None:
        return Finding("input-gradient passes", True)
    who = "every parameter" if s.params == s.total else f"{s.params} of {s.total} parameters"
    shape = "x".join(map(str, s.shape)) or "0-dim"
    return Finding("input-gradient passes", True, (
        f"{s.inputs} of the {s.passes} backward passes accumulated in .grad of {who} "
        f"{'(the sum the optimizer step read)' if s.read else '(at the block end)'} also "
        f"filled the .grad of an input of the model that is not a parameter (a {shape} leaf "
        f"that requires grad, one per call): backward passes taken for an input's gradient "
        f"(a Langevin/MCMC sampler, an adversarial attack, a saliency map) accumulate into "
        f"every parameter's .grad as well; take the input's gradient with "
        f"torch.autograd.grad(out, x) (or backward(inputs=[x])), or call zero_grad() after "
        f"those passes"))
