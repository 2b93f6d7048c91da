"""An optimizer's averaging coefficient outside the range where its average forgets: a
momentum, ``dampening`` or decay rate of 1 or more, read from the groups of the optimizers
whose step held a watched parameter.

``torch.optim.SGD`` keeps ``buf = momentum * buf + (1 - dampening) * g`` (its docs' algorithm):
with ``momentum >= 1`` the buffer never decays, it is the sum of every past gradient (or grows
geometrically), and the steps keep growing and overshoot; with ``dampening >= 1`` no gradient
after the first enters it (above 1, with the wrong sign).  ``RMSprop`` keeps ``v = alpha * v + (1 - alpha) * g ** 2``: with
``alpha >= 1`` the average of the squares never takes a gradient in and stays 0, so each step
divides by ``eps`` alone; its ``momentum`` is SGD's.  Torch checks these only from below (Adam's
betas from both sides).  A coefficient in ``[0, 1)`` averages over about ``1 / (1 - c)`` steps.

Imports :mod:`.finding` only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from .finding import Finding, Options

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = ["Average", "averages", "no_forgetting"]

# optimizer class -> (coefficient, what its value >= 1 does)
_SGD_MOMENTUM = ("the momentum buffer buf = momentum * buf + g never decays: it is the sum of "
                 "every past gradient (or grows), so the steps keep growing and overshoot")
_DAMPENING = ("with momentum, buf = momentum * buf + (1 - dampening) * g takes no gradient in "
              "after the first step (or takes it with the wrong sign, above 1): every later "
              "step repeats the first, shrunk by momentum")
_ALPHA = ("the average of squared gradients v = alpha * v + (1 - alpha) * g ** 2 never takes a "
          "gradient in and stays 0, so each step divides by eps alone")
_RMS_MOMENTUM = ("the momentum buffer buf = momentum * buf + g / (sqrt(v) + eps) never decays: "
                 "it sums every past step, so the steps keep growing and overshoot")
_COEFFICIENTS = {"SGD": (("momentum", _SGD_MOMENTUM), ("dampening", _DAMPENING)),
                 "RMSprop": (("alpha", _ALPHA), ("momentum", _RMS_MOMENTUM))}


class Average(NamedTuple):
    """``optimizer`` (its class) group ``group`` has ``name=value`` with ``value >= 1``."""

    optimizer: str
    group: int
    name: str
    value: float
    what: str


def averages(w: GradWatch) -> list[Average]:
    """The coefficients of at least 1 in the groups of the optimizers that stepped (a
    ``dampening`` only where ``momentum`` is nonzero)."""
    out = []
    for h in w.grads.optimizers:
        kind = type(h.optimizer).__name__
        for i, group in enumerate(h.optimizer.param_groups):
            for name, what in _COEFFICIENTS.get(kind, ()):
                value = group.get(name)
                if name == "dampening" and not group.get("momentum"):
                    continue
                if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 1:
                    out.append(Average(kind, i, name, float(value), what))
    return out


def no_forgetting(w: GradWatch, o: Options) -> Finding:
    """The first :class:`Average` of :func:`averages`, in words."""
    found = averages(w)
    if not found:
        return Finding("optimizer averages", True)
    a = found[0]
    return Finding("optimizer averages", True, (
        f"{a.optimizer} (param group {a.group}) has {a.name}={a.value:g} (observed: the "
        f"optimizer's param_groups at its step): {a.what}; a value below 1, such as 0.9, "
        f"averages over about 1 / (1 - {a.name}) steps (torch checks only that it is not "
        f"negative)"))
