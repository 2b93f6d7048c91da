"""Why a parameter's gradient was None, zero or NaN in a watched step, in words.

Built from what the hooks of :class:`~gradarg.trace.gradflow.GradWatch` saw, nothing else;
where the record cannot decide between causes it says so.  The causes are ordered rules
(:data:`RULES`, the shape of :data:`gradarg.trace.causes.RULES`, :mod:`.rules`): a new one is
one function here, placed in :data:`RULES`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import torch

from . import findings, rules
from .records import ROOT_NAME, ParamRecord
from .rules import Rule
from .values import fmt_norm as _f

if TYPE_CHECKING:
    from .gradflow import GradWatch

__all__ = ["RULES", "why_no_grad"]


class Asked(NamedTuple):
    """What a rule reads: the watch, the parameter's name and its record."""

    w: GradWatch
    name: str
    r: ParamRecord


def _frozen(a: Asked) -> str | None:
    if a.r.requires_grad:
        return None
    return (f"{a.name} has requires_grad=False (frozen): backward computes no gradient "
            f"for it")


def _no_backward(a: Asked) -> str | None:
    if a.r.grad is not None or a.w._backward_seen:
        return None
    return (f"no backward pass reached the model while it was watched, so nothing "
            f"reached {a.name}")


def _module_not_called(a: Asked) -> str | None:
    w, r = a.w, a.r
    if r.grad is not None or r.module_ran:
        return None
    kind = type(dict(w.model.named_modules())[
        "" if r.module == ROOT_NAME else r.module]).__name__
    return (f"no gradient reached {a.name}: module '{r.module}' ({kind}) was never "
            f"called in the forward pass, so the parameter is probably unused by "
            f"the model's forward (a parent could still read it directly)")


def _cut(a: Asked) -> str | None:
    if a.r.grad is not None:
        return None
    cut = [(c, mode) for c, mode in findings.cut_calls(a.w) if c.name == a.r.module]
    if not cut:
        return None
    c, mode = cut[0]
    return (f"no gradient reached {a.name}: module '{c.name}' ({c.kind}) produced an "
            f"output without autograd history: {findings.CUT_CAUSE[mode]}; "
            f"gradarg.why_no_grad(loss, param, module=model) names where that output "
            f"rejoins the graph")


def _stopped(a: Asked) -> str | None:
    if a.r.grad is not None:
        return None
    stop = a.w.stopped_at()
    if stop is None or a.name not in stop.below:
        return None
    at = ""
    if stop.call is not None and stop.call < len(a.w.modules):
        c = a.w.modules[stop.call]
        at = f" (the output of module '{c.name}', {c.kind})"
    what = f": {stop.what}" if stop.what else ""
    return (f"no gradient reached {a.name}: backward() stopped with an error at {stop.node}"
            f"{at} before reaching it: a tensor that node saved for the backward was modified "
            f"in place after it was saved{what}; {stop.fix}")


def _output_unused(a: Asked) -> str | None:
    if a.r.grad is not None:
        return None
    unused = [c for c in findings.unused_output_calls(a.w) if c.name == a.r.module]
    if not unused:
        return None
    c = unused[0]
    return (f"no gradient reached {a.name}: module '{c.name}' ({c.kind}) ran and "
            f"returned an output with autograd history, but no gradient reached that "
            f"output: nothing on the way to the loss uses it (a returned state, such "
            f"as a recurrent encoder's hidden state, not passed on), or it is detached "
            f"after the module")


def _cannot_tell(a: Asked) -> str | None:
    if a.r.grad is not None:
        return None
    return (f"no gradient reached {a.name}, although module '{a.r.module}' ran: either "
            f"the module's forward does not use it, or its path to the loss was cut "
            f"(detach(), .data, torch.no_grad(), a NumPy round trip); the record cannot "
            f"tell which: gradarg.why_no_grad(loss, param) reads the graph")


def _zero_factor(a: Asked) -> str | None:
    block = (a.w._zero_blocked or {}).get(a.name)
    if a.r.state != "zero" or block is None:
        return None
    params = a.w.parameters
    fshown = ", ".join(f"{f} (of module '{params[f].module}')" if f in params else f
                       for f in block.factors)
    gets, it = ("gets", "it") if len(block.factors) == 1 else ("get", "them")
    if all(params[f].grad for f in block.factors if f in params):
        when = ("expected for a factor initialised to zero, as LoRA's B, at the first step"
                if block.adjacent else f"if {it} {'is' if it == 'it' else 'are'} initialised "
                f"to zero on purpose, as a ReZero gate, this lasts one step")
        then = (f"{fshown} {gets} a nonzero gradient, so a gradient reaches {a.name} once an "
                f"optimizer step moves {it} ({when})")
    else:
        then = (f"{fshown} {gets} an exactly zero gradient too, so nothing moves: initialise "
                f"one of the factors nonzero")
    return (f"{a.name} received a gradient that is exactly zero: every path to it passes "
            f"through a product ({block.node}) with {fshown}, which "
            f"{'was' if len(block.factors) == 1 else 'were'} all zeros at this backward; {then}")


def _received(a: Asked) -> str | None:
    text = _state_text(a.w, a.name, a.r)
    if a.r.held_before:
        text += (f"; .grad already held a gradient of norm {_f(a.r.held_before)} when this "
                 f"step's arrived, so .grad now holds their sum (zero_grad() not called "
                 f"before this backward?)")
    return text


RULES: tuple[Rule[Asked, str], ...] = (
    Rule(("frozen",), "", _frozen),
    Rule(("no-backward",), "", _no_backward),
    Rule(("module-not-called",), "", _module_not_called),
    Rule(("cut",), "", _cut),
    Rule(("stopped",), "", _stopped),
    Rule(("output-unused",), "", _output_unused),
    Rule(("cannot-tell",), "", _cannot_tell),
    Rule(("zero-factor",), "", _zero_factor),
    Rule(("received",), "", _received),
)
"""What :meth:`GradWatch.why_no_grad` checks, in order; the last rule always answers."""


def why_no_grad(w: GradWatch, param: str | torch.Tensor) -> str:
    """See :meth:`GradWatch.why_no_grad`."""
    name = w._param_name(param)
    return rules.decide(RULES, Asked(w, name, w.parameters[name]))[1]


def _state_text(w: GradWatch, name: str, r: ParamRecord) -> str:
    from ..show.render import fmt

    state = r.state
    if state == "ok":
        text = f"{name} received a gradient of norm {fmt(r.grad)} from backward"
        if r.final_known and r.held_before is None and r.final != r.grad:
            if r.final is None:
                text += "; .grad was cleared before the with block ended (zero_grad)"
            elif r.grad and abs(r.final / r.grad - 1) > 1e-5:
                text += (f"; .grad held {fmt(r.final)} when the with block ended, "
                         f"{fmt(r.final / r.grad, 3)} times that: changed after backward "
                         f"(clipping, a GradScaler's unscale_, or an edit)")
        return text
    calls = [c for c in w.modules if c.name == r.module]
    where = ""
    if calls:
        c = calls[0]
        where = (f"; the gradient arriving at module '{c.name}' had norm "
                 f"{_f(c.grad_out)}")
    if state == "nonfinite":
        first = w.first_nonfinite()
        if first is not None:
            where += f"; the first module to send NaN/Inf was '{first.name}' ({first.kind})"
        return f"{name} received a gradient holding NaN or Inf{where}"
    dead = [c for c in w.modules if c.dead_units and c.dead_units[0]]
    text = f"{name} received a gradient that is exactly zero{where}"
    if dead:
        c = dead[0]
        d, units = c.dead_units or (0, 0)
        text += (f"; module '{c.name}' ({c.kind}) had {d} of {units} units "
                 f"({c.unit_axis}) at 0 for every example and position of the batch")
    return text
