"""Why a parameter's gradient was None, zero or NaN in a watched step, in words.

Built from what the hooks of :class:`~gradarg.trace.gradflow.GradWatch` saw, nothing else;
where the record cannot decide between causes it says so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from . import findings
from .records import ROOT_NAME, ParamRecord
from .values import fmt_norm as _f

if TYPE_CHECKING:
    from .gradflow import GradWatch

__all__ = ["why_no_grad"]


def why_no_grad(w: GradWatch, param: str | torch.Tensor) -> str:
    """See :meth:`GradWatch.why_no_grad`."""
    name = w._param_name(param)
    r = w.parameters[name]
    if not r.requires_grad:
        return (f"{name} has requires_grad=False (frozen): backward computes no gradient "
                f"for it")
    if r.grad is None:
        if not w._backward_seen:
            return (f"no backward pass reached the model while it was watched, so nothing "
                    f"reached {name}")
        if not r.module_ran:
            kind = type(dict(w.model.named_modules())[
                "" if r.module == ROOT_NAME else r.module]).__name__
            return (f"no gradient reached {name}: module '{r.module}' ({kind}) was never "
                    f"called in the forward pass, so the parameter is probably unused by "
                    f"the model's forward (a parent could still read it directly)")
        cut = [(c, mode) for c, mode in findings.cut_calls(w) if c.name == r.module]
        if cut:
            c, mode = cut[0]
            return (f"no gradient reached {name}: module '{c.name}' ({c.kind}) produced an "
                    f"output without autograd history: {findings.CUT_CAUSE[mode]}; "
                    f"gradarg.why_no_grad(loss, param, module=model) names where that output "
                    f"rejoins the graph")
        unused = [c for c in findings.unused_output_calls(w) if c.name == r.module]
        if unused:
            c = unused[0]
            return (f"no gradient reached {name}: module '{c.name}' ({c.kind}) ran and "
                    f"returned an output with autograd history, but no gradient reached that "
                    f"output: nothing on the way to the loss uses it (a returned state, such "
                    f"as a recurrent encoder's hidden state, not passed on), or it is detached "
                    f"after the module")
        return (f"no gradient reached {name}, although module '{r.module}' ran: either "
                f"the module's forward does not use it, or its path to the loss was cut "
                f"(detach(), .data, torch.no_grad(), a NumPy round trip); the record cannot "
                f"tell which: gradarg.why_no_grad(loss, param) reads the graph")
    text = _state_text(w, name, r)
    if r.held_before:
        text += (f"; .grad already held a gradient of norm {_f(r.held_before)} when this "
                 f"step's arrived, so .grad now holds their sum (zero_grad() not called "
                 f"before this backward?)")
    return text


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
