"""``gaussian_nll_loss`` given its target and its variance in each other's place.

``torch.nn.functional.gaussian_nll_loss(input, target, var)`` (and ``nn.GaussianNLLLoss``)
takes the predicted mean, the target, then the predicted variance
(https://docs.pytorch.org/docs/stable/generated/torch.nn.GaussianNLLLoss.html).  Called as
``(mean, var, target)``, the model's variance is read as the target and the data as the
variance: nothing raises while the data are positive, the mean is pulled towards the predicted
variance and the variance head learns only through that.

Seen here, at the call (:func:`.patches.register_gaussian_nll_hook`, read by
:class:`.lossnodes.LossNodes`): the input and the target carry gradient while the variance
does not (a tensor without gradient, or a number).  A model's output given as the target of
a loss whose variance is fixed is named too: its target carries gradient.

Imports :mod:`.finding` only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import torch

from .finding import Finding, Options

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = ["GaussianArgs", "gaussian_args", "read"]

_NAMES = ("input", "target", "var")


class GaussianArgs(NamedTuple):
    """A ``gaussian_nll_loss`` call whose ``target`` (shape ``target``) carries gradient and
    whose ``var`` (shape ``var``, ``None`` for a number) does not."""

    target: tuple[int, ...]
    var: tuple[int, ...] | None


def read(args: Any, kwargs: Any) -> GaussianArgs | None:
    """The call's arguments when its target carries gradient and its variance does not."""
    given = list(args[:3]) + [kwargs.get(n) for n in _NAMES[len(args[:3]):]]
    inp, target, var = given
    if not (isinstance(inp, torch.Tensor) and isinstance(target, torch.Tensor)):
        return None
    var_grad = isinstance(var, torch.Tensor) and var.requires_grad
    if inp.requires_grad and target.requires_grad and not var_grad:
        shape = tuple(var.shape) if isinstance(var, torch.Tensor) else None
        return GaussianArgs(tuple(target.shape), shape)
    return None


def gaussian_args(w: GradWatch, o: Options) -> Finding:
    """A ``gaussian_nll_loss`` whose target carries gradient and whose variance does not."""
    g = w.lossnodes.found.get("gaussnll")
    if g is None:
        return Finding("gaussian_nll_loss arguments", True)
    var = f"var {g.var}" if g.var is not None else "a number as var"
    return Finding("gaussian_nll_loss arguments", True, (
        f"gaussian_nll_loss(input, target, var) was given a target {g.target} that carries "
        f"gradient and {var} that does not (observed at the call): its order is (mean, "
        f"target, variance), so a call as (mean, var, target) swaps them, the predicted "
        f"variance read as the target and the data as the variance; pass the model's variance "
        f"third (or detach the target if it is meant to be fixed)"))
