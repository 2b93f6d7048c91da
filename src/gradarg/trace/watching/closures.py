"""A step given a closure whose evaluations summed into ``.grad``.

``optimizer.step(closure)`` calls the closure, which computes the loss and its gradient, as
many times as the optimizer needs: ``LBFGS`` re-evaluates it at new parameter values within
one step (``max_iter`` times, more with a line search).  Without ``zero_grad()`` in the
closure, each evaluation's ``backward()`` adds to the last one's ``.grad``: the step reads a
sum of gradients taken at different parameters, a direction no evaluation had
(https://docs.pytorch.org/docs/stable/optim.html#optimizer-step-closure: "The closure should
clear the gradients, compute the loss, and return it").

Seen here: torch's global optimizer step hooks mark the steps given a closure; at each
outermost ``backward()`` inside one, the optimizer's smallest parameter is read: its value,
and whether its ``.grad`` already held a nonzero gradient.  A backward that found ``.grad``
nonzero while the parameter changed since the step's previous backward summed two
evaluations.  Several backward passes at the same values (micro-batches of one evaluation)
are not named.

Imports :mod:`.finding` and :mod:`.patches` only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import torch
from torch.optim.optimizer import register_optimizer_step_post_hook as _post_hook
from torch.optim.optimizer import register_optimizer_step_pre_hook as _pre_hook

from . import patches
from .finding import Finding, Options

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = ["ClosureSteps", "ClosureSum", "closure_sums"]


class ClosureSum(NamedTuple):
    """A ``kind`` step (an optimizer's class) given a closure, whose ``passes`` backward
    passes included ``summed`` that added to a gradient taken at other parameter values."""

    kind: str
    passes: int
    summed: int


class _Open:
    def __init__(self, optimizer: Any):
        params = [p for g in optimizer.param_groups for p in g["params"]
                  if isinstance(p, torch.Tensor) and p.requires_grad]
        self.optimizer = optimizer
        self.probe = min(params, key=lambda p: p.numel()) if params else None
        self.last: torch.Tensor | None = None  # the probe's value at the last backward
        self.passes = self.summed = 0


class ClosureSteps:
    """The first :class:`ClosureSum` of the block (``found``)."""

    def __init__(self) -> None:
        self.found: ClosureSum | None = None
        self._open: list[_Open] = []
        self._handles: list[Any] = []

    def attach(self) -> None:
        self._handles = [_pre_hook(self._began), _post_hook(self._ended),
                         patches.register_backward_call_hook(self._backward, outer=True)]

    def detach(self) -> list[Any]:
        handles, self._handles, self._open = self._handles, [], []
        return handles

    def _began(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        if patches.given_closure(args, kwargs):
            self._open.append(_Open(optimizer))

    def _backward(self, tensors: Any) -> None:
        if not self._open or (p := self._open[-1].probe) is None:
            return
        step = self._open[-1]
        now = p.detach().clone()
        if step.last is not None and not torch.equal(now, step.last) and p.grad is not None \
                and bool(p.grad.detach().abs().sum() > 0):
            step.summed += 1
        step.last, step.passes = now, step.passes + 1

    def _ended(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        if self._open and self._open[-1].optimizer is optimizer:
            step = self._open.pop()
            if step.summed and self.found is None:
                self.found = ClosureSum(type(optimizer).__name__, step.passes, step.summed)


def closure_sums(w: GradWatch, o: Options) -> Finding:
    """The :class:`ClosureSum` of the block, in words."""
    c = w.closures.found
    if c is None:
        return Finding("closure evaluations", True)
    return Finding("closure evaluations", True, (
        f"{c.kind}.step(closure) evaluated the closure {c.passes} times, at changing "
        f"parameters, and {c.summed} of its backward passes added to the .grad of the "
        f"evaluation before (observed: .grad nonzero at each, the parameters moved in "
        f"between): the closure does not reset the gradients, so .grad summed gradients "
        f"taken at different points and the step read that sum; call optimizer.zero_grad() "
        f"at the start of the closure"))
