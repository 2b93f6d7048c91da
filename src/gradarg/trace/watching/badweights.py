"""Parameters whose values hold NaN/Inf, read when the summary is made, and an optimizer whose
``eps`` is zero in the parameters' dtype.

A module whose output holds NaN/Inf while its input is finite has either overflowed or
computed with weights that already hold NaN/Inf: the weights are read before an overflow is
named (:func:`nonfinite_params`).  One way weights become NaN with finite gradients: Adam,
AdamW, RMSprop and the other optimizers that divide by ``sqrt(v) + eps`` keep their state in
the parameters' dtype, and ``eps=1e-8`` rounds to 0 in float16 (its smallest subnormal is
about 6e-8): an entry whose second moment is still 0 (it never had a gradient) is updated by
``0 / 0`` (https://docs.pytorch.org/docs/stable/generated/torch.optim.Adam.html).
:func:`eps_underflow` names it when the optimizer's state shows it: the NaN entries of a
narrow parameter are entries whose ``exp_avg_sq`` (``square_avg``, ``sum``) is 0.

Imports :mod:`.finding` only.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, NamedTuple

import torch

from .finding import Finding, Options

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = ["Underflow", "eps_underflow", "nonfinite_params", "underflows"]

_SECOND = ("exp_avg_sq", "square_avg", "sum")  # Adam-family, RMSprop, Adagrad state names


def _bad(p: torch.Tensor) -> int:
    try:
        return int((~torch.isfinite(p.detach())).sum())
    except (RuntimeError, TypeError):  # a sharded or meta tensor: not read
        return 0


def nonfinite_params(w: GradWatch, module: str) -> list[tuple[str, int, int]]:
    """``(name, non-finite entries, entries)`` of the floating parameters module ``module``
    holds itself that hold NaN/Inf now, but for those an optimizer step wrote after they got
    a NaN/Inf gradient (the step made them NaN, not the forward that read them)."""
    out = []
    for p, (name, _) in w.watched.owner.items():
        r = w.parameters[name]
        stepped = any(n.kind == "step" and (r.state == "nonfinite" or (
            n.measured and n.held is not None and not math.isfinite(n.held))) for n in r.events)
        if (r.module == module and p.is_floating_point() and not stepped
                and (k := _bad(p))):
            out.append((name, k, p.numel()))
    return out


class Underflow(NamedTuple):
    """``bad`` non-finite entries of parameter ``name`` (``dtype``) held by ``optimizer``
    whose ``eps`` is 0 in that dtype; ``at_zero``: how many of them have a zero second
    moment in its state (``None``: no such state)."""

    name: str
    dtype: str
    bad: int
    entries: int
    optimizer: str
    eps: float
    at_zero: int | None


def _at_zero(state: Any, p: torch.Tensor) -> int | None:
    for key in _SECOND:
        v = state.get(key) if isinstance(state, dict) else None
        if isinstance(v, torch.Tensor) and v.shape == p.shape:
            return int(((v == 0) & ~torch.isfinite(p.detach())).sum())
    return None


def underflows(w: GradWatch) -> list[Underflow]:
    """The narrow parameters held by an optimizer that stepped, whose ``eps`` is 0 in their
    dtype, that hold NaN/Inf now."""
    names = {id(p): name for p, (name, _) in w.watched.owner.items()}
    out = []
    for h in w.grads.optimizers:
        opt = h.optimizer
        for group in opt.param_groups:
            eps = group.get("eps")
            if not isinstance(eps, (int, float)) or eps <= 0:
                continue
            for p in group["params"]:
                if (id(p) in names and p.dtype in (torch.float16, torch.bfloat16)
                        and float(torch.tensor(eps, dtype=p.dtype)) == 0 and (k := _bad(p))):
                    out.append(Underflow(names[id(p)], str(p.dtype).replace("torch.", ""), k,
                                         p.numel(), type(opt).__name__, float(eps),
                                         _at_zero(opt.state.get(p), p)))
    return out


def eps_underflow(w: GradWatch, o: Options) -> Finding:
    """Narrow parameters made NaN/Inf by an optimizer whose ``eps`` rounds to 0."""
    found = underflows(w)
    if not found:
        return Finding("optimizer eps", True)
    u = found[0]
    where = ("" if u.at_zero is None else
             f"; {u.at_zero} of them where its second moment is still 0 (an entry that never "
             f"had a gradient: 0 / 0)")
    more = f"; also {', '.join(x.name for x in found[1:4])}" if len(found) > 1 else ""
    return Finding("optimizer eps", True, (
        f"{u.bad} of the {u.entries} entries of {u.name} ({u.dtype}) hold NaN/Inf after "
        f"{u.optimizer}.step() (read at the block's end){where}: its eps={u.eps:g} is 0 in "
        f"{u.dtype}, so the update divides by sqrt(second moment) + 0; keep float32 master "
        f"weights (or float32 parameters under torch.autocast), or raise eps (1e-4 is "
        f"nonzero in float16){more}"))
