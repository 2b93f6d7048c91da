"""Why a parameter's gradient was None, zero or NaN in a watched step, in words.

Built from what the hooks of :class:`~gradarg.trace.watching.watch.GradWatch` saw, nothing else;
where the record cannot decide between causes it says so.  The causes are ordered rules
(:data:`RULES`, the shape of :data:`gradarg.trace.why.causes.RULES`, :mod:`.rules`): a new one is
one function here, placed in :data:`RULES`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import torch

from ..graph.values import fmt_norm as _f
from ..why import rules
from ..why.rules import Rule
from . import (
    cutcalls,
    eventfindings,
    events,
    findings,
    holds,
    scales,
    sourceuse,
    unused,
    zerocauses,
)
from .detail import light_text
from .records import ROOT_NAME, ParamRecord

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = ["RULES", "why_no_grad"]


class Asked(NamedTuple):
    """What a rule reads: the watch, the parameter's name and its record."""

    w: GradWatch
    name: str
    r: ParamRecord


def _frozen(a: Asked) -> str | None:
    if a.r.requires_grad:
        return None
    moved = a.w.grads.frozen_moved.get(a.name)
    if moved is not None:
        return (f"{a.name} has requires_grad=False (frozen): backward computes no gradient "
                f"for it, but it still moved at the optimizer step (observed: before and "
                f"after {moved.optimizer}.step()): its .grad was a tensor, not None, so the "
                f"step applied {moved.why}; set .grad = None when freezing")
    return (f"{a.name} has requires_grad=False (frozen): backward computes no gradient "
            f"for it")


def _gone(a: Asked) -> str | None:
    if a.name in a.w.grads.replaced or a.name not in holds.gone(a.w):
        return None
    now = dict(a.w.model.named_parameters()).get(a.name)
    got = (" (the model's tensor under that name now is a new one, which the record did not "
           "watch: gradarg.why_no_grad(loss, param) reads it)" if now is not None else "")
    return (f"{a.name} is no longer a parameter of the model: its module was replaced while "
            f"the watch ran (observed: the model no longer holds the tensor it had when the "
            f"watch began){got}; an optimizer built before the replacement holds the old "
            f"tensor, and the new module never moves unless the optimizer is rebuilt")


def _recreated(a: Asked) -> str | None:
    if a.name not in a.w.grads.replaced:
        return None
    return eventfindings.replacement_text(a.w, a.name)


def _no_backward(a: Asked) -> str | None:
    if a.r.grad is not None or a.w.watched.backward_seen:
        return None
    return (f"no backward pass reached the model while it was watched, so nothing "
            f"reached {a.name}{findings.raised(a.w)}{findings.leaf_loss(a.w)}"
            f"{cutcalls.cut_text(a.w)}")


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
    cut = [(c, mode) for c, mode in cutcalls.cut_calls(a.w) if c.name == a.r.module]
    if not cut:
        return None
    c, mode = cut[0]
    return (f"no gradient reached {a.name}: module '{c.name}' ({c.kind}) produced an "
            f"output without autograd history: {cutcalls.CUT_CAUSE[mode]}"
            f"{cutcalls.site_text(a.w, c.index)}; "
            f"gradarg.why_no_grad(loss, param, module=model) names where that output "
            f"rejoins the graph")


def _stopped(a: Asked) -> str | None:
    if a.r.grad is not None:
        return None
    stop = a.w.graph.stopped_at()
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
    calls = [c for c in unused.unused_output_calls(a.w) if c.name == a.r.module]
    if not calls:
        return None
    c = calls[0]
    return (f"no gradient reached {a.name}: module '{c.name}' ({c.kind}) ran and "
            f"returned an output with autograd history, but no gradient reached that "
            f"output: {unused.unused_why(a.w, c)}")


def _raised(a: Asked) -> str | None:
    e, r = a.w.grads.ended, a.w.grads.raised
    if a.r.grad is not None:
        return None
    if e is not None and e.by_backward:
        return (f"no gradient reached {a.name}: the with block ended with a backward() that "
                f"raised {e.kind} (observed: the call raised, the error ended the block): "
                f"{e.message}")
    if r is None:
        return None
    return (f"no gradient reached {a.name}: a backward() call in the block raised {r.kind} "
            f"(observed: the call raised; the error was caught inside the block), and a "
            f"backward stops at the node that raises, so what lies below it gets no "
            f"gradient: {r.message}")


_NO_GRADIENT_IN = {
    "comparison": ("in a comparison", (
        "a comparison returns booleans, which carry no gradient: a mask it selects with is "
        "not differentiable in it (for a learnable threshold, weight by a smooth relaxation "
        "such as torch.sigmoid((threshold - x) / temperature) instead)")),
    "cut": ("through calls that return no gradient", (
        ".item(), .detach(), .data, round, argmax, sign and their kind return values with no "
        "autograd history")),
    "no_grad": ("inside torch.no_grad()", (
        "nothing computed under torch.no_grad() is recorded for the backward")),
}


def _none_returned(a: Asked) -> str | None:
    """In the graph of a completed ``backward()`` call, yet no gradient: the custom Functions
    on its paths returned None (observed after the call: :mod:`.noneback`)."""
    customs = a.w.nones.found.get(a.name) if a.r.grad is None else None
    if not customs:
        return None
    shown = ", ".join(f"{c.removesuffix('Backward')} (node {c})" for c in customs[:3])
    if len(customs) == 1:
        which = (f"the custom autograd.Function {shown} lies on those paths, and its "
                 f"backward() returned None for the input that leads to {a.name}")
    else:
        which = (f"the custom autograd.Functions {shown}{', ...' if len(customs) > 3 else ''} "
                 f"lie on those paths, and on each path the backward() of one of them returned "
                 f"None for the input that leads to {a.name}")
    return (f"no gradient reached {a.name}, although it is in the graph the backward() call "
            f"ran through (observed: its .grad stayed None after that call returned, so every "
            f"path to it returned None): {which}; return a gradient for every input that "
            f"requires grad (ctx.needs_input_grad tells which)")


def _source_read(a: Asked) -> str | None:
    """The class's source reads the parameter only in ways that carry no gradient, or never
    (read from the source: :mod:`.sourceuse`)."""
    if a.r.grad is not None or not a.r.requires_grad:
        return None
    try:
        module = (a.w.model if a.r.module == ROOT_NAME
                  else a.w.model.get_submodule(a.r.module))
    except AttributeError:
        return None
    local = a.name.rsplit(".", 1)[-1]
    reads = sourceuse.reads_of(module, local)
    if reads is None:
        return None
    cls = type(module).__name__
    if not reads:
        return (f"no gradient reached {a.name}: the methods of {cls} never read "
                f"self.{local} (read from the class's source, not from the run), so no "
                f"operation of the forward uses it")
    cuts = [r for r in reads if r.kind != "other"]
    if not cuts:
        return None
    r = cuts[0]
    how, why = _NO_GRADIENT_IN[r.kind]
    at = f"line {r.line}, `{r.text}`"
    others = [x for x in reads if x.kind == "other"]
    if others:  # which read ran is not recorded: what the source shows, and no more
        o = others[0]
        return (f"no gradient reached {a.name}, although module '{a.r.module}' ran: {cls} "
                f"reads self.{local} {how} ({at}; read from the class's source, not from "
                f"the run), where {why}, and also at line {o.line} (`{o.text}`), where a "
                f"gradient could flow; the record cannot tell which ran, or whether a path "
                f"from the latter was cut (detach(), .data, torch.no_grad())")
    more = f" and {len(cuts) - 1} more such read(s)" if len(cuts) > 1 else ""
    return (f"no gradient reached {a.name}: {cls}.{r.method} reads self.{local} only {how} "
            f"(read from the class's source, not from the run: {at}{more}): {why}")


def _param(w: GradWatch, name: str) -> Any | None:
    """The watched parameter whose full name is ``name``; ``None``: none."""
    return next((q for q, (n, _) in w.watched.owner.items() if n == name), None)


def _cannot_tell(a: Asked) -> str | None:
    if a.r.grad is not None:
        return None
    p = _param(a.w, a.name)
    unseen = [site for site, leaves in a.w.terms.derivative_leaves
              if p is not None and leaves and id(p) not in leaves]
    if unseen:
        at = f" at {unseen[0]}" if unseen[0] else ""
        return (f"no gradient reached {a.name}, although module '{a.r.module}' ran: the "
                f"derivative taken with torch.autograd.grad(..., create_graph=True){at} has a "
                f"graph that does not reach {a.name} (observed: its leaves), so no derivative "
                f"of what was differentiated depends on it (a bias that adds a constant to an "
                f"energy or potential, which no derivative sees); a loss built from those "
                f"derivatives gives it no gradient, as expected")
    return (f"no gradient reached {a.name}, although module '{a.r.module}' ran: either "
            f"the module's forward does not use it, or its path to the loss was cut "
            f"(detach(), .data, torch.no_grad(), a NumPy round trip); the record cannot "
            f"tell which: gradarg.why_no_grad(loss, param) reads the graph")


def _hook_zeroed(a: Asked) -> str | None:
    change = zerocauses.hook_change(a.r)
    if a.r.state != "zero" or change is None:
        return None
    return (f"{a.name}'s .grad is all zero although backward computed a gradient of norm "
            f"{_f(change[0])} for it: a hook registered on it (Tensor.register_hook) replaced "
            f"that gradient with zeros (observed: its norm before and after the hooks on it)"
            f"{zerocauses.hook_moved_text(a.w, [a.name])}")


def _zero_factor(a: Asked) -> str | None:
    block = (a.w.graph.zero_blocked).get(a.name)
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
        then = (f"{fshown} {gets} an exactly zero gradient too, so nothing moves, now or at "
                f"any later step: all-zero factors of a product are a fixed point of gradient "
                f"descent; initialise one of the factors nonzero")
    return (f"{a.name} received a gradient that is exactly zero: every path to it passes "
            f"through a product ({block.node}) with {fshown}, which "
            f"{'was' if len(block.factors) == 1 else 'were'} all zeros at this backward; {then}")


def _received(a: Asked) -> str | None:
    return _state_text(a.w, a.name, a.r) + _passes_text(a.w, a.r)


def _passes_text(w: GradWatch, r: ParamRecord) -> str:
    """What the final ``.grad`` sums, from the passes the hooks counted."""
    acc = events.accumulation(r.events, eventfindings.updates(w), events.step_forwards(w.grads.log))
    n = acc.passes
    if acc.kind == "held":
        return (f"; .grad already held a gradient of norm {_f(acc.first_held)} when the first "
                f"backward pass in this with block arrived, so .grad now holds their sum "
                f"(zero_grad() not called before this backward?)")
    if acc.kind == "steps":
        return (f"; .grad already held a gradient of norm {_f(r.held_before)} when this "
                f"step's arrived, from before an optimizer step, so .grad now holds their sum "
                f"(zero_grad() not called before this backward?)")
    if acc.kind == "same-forward":
        if acc.same:
            return (f"; {n} backward passes accumulated into its .grad "
                    f"({eventfindings.same_graph(w)}), the same gradient each time: .grad holds "
                    f"{n} times one pass")
        return f"; .grad holds the sum of {n} backward passes ({eventfindings.same_graph(w)})"
    if acc.kind == "micro-batches":
        after = next((e.after for e in reversed(r.events) if e.kind == "pass"), None)
        return (f"; .grad holds the sum over {n} micro-batches, each its own forward and "
                f"backward, the parameters unchanged in between (norm {_f(after)})")
    if acc.kind == "mixed":
        return f"; .grad holds the sum of {n} backward passes over {acc.forwards} forwards"
    return ""


RULES: tuple[Rule[Asked, str], ...] = (
    Rule(("frozen",), "", _frozen),
    Rule(("gone",), "", _gone),
    Rule(("recreated",), "", _recreated),
    Rule(("no-backward",), "", _no_backward),
    Rule(("module-not-called",), "", _module_not_called),
    Rule(("cut",), "", _cut),
    Rule(("stopped",), "", _stopped),
    Rule(("raised",), "", _raised),
    Rule(("none-returned",), "", _none_returned),
    Rule(("output-unused",), "", _output_unused),
    Rule(("source-read",), "", _source_read),
    Rule(("cannot-tell",), "", _cannot_tell),
    Rule(("hook-zeroed",), "", _hook_zeroed),
    Rule(("zero-factor",), "", _zero_factor),
    Rule(("received",), "", _received),
)
"""What :meth:`GradWatch.why_no_grad` checks, in order; the last rule always answers."""


def why_no_grad(w: GradWatch, param: str | torch.Tensor) -> str:
    """See :meth:`GradWatch.why_no_grad`."""
    try:
        name = w.param_name(param)
    except KeyError:
        if not isinstance(param, torch.Tensor):
            raise
        text = _not_registered(w, param)
        if text is None:
            raise
        return text
    r = w.parameters[name]
    if not w.detail.full and r.state != "ok":
        return light_text(w.detail, name, r.state)
    return rules.decide(RULES, Asked(w, name, r))[1]


def _not_registered(w: GradWatch, param: torch.Tensor) -> str | None:
    """A tensor the model holds now as a parameter, not the one registered under that name
    when the watch began: what the registration hook saw, or that it saw nothing."""
    now = next((n for n, p in w.model.named_parameters() if p is param), None)
    if now is None:
        return None
    if now in w.grads.replaced:
        return (f"this tensor is the model's parameter {now} now, but not the parameter "
                f"registered under that name when the watch began: "
                f"{eventfindings.replacement_text(w, now)}")
    return (f"this tensor is the model's parameter {now} now, but not the one registered "
            f"under that name when the watch began, and no assignment of it was seen while "
            f"the watch ran: it was replaced before, or by a route that does not register "
            f"parameters; the record is about the registered one ({now!r})")


def _after_text(w: GradWatch, r: ParamRecord) -> str:
    """What happened to ``.grad`` after the last backward pass, as observed."""
    from ...show.render import fmt

    if w.engine is not None and w.world > 1:
        return ""  # .grad is the processes' average: not comparable with this pass

    a = events.after_backward(r.events)
    if a.change == "reset" and a.when == "step":
        return ("; .grad was reset to None after that backward and before the optimizer step "
                "(zero_grad between backward and step): the step skipped it")
    if a.change == "zeroed" and a.when == "step":
        return ("; .grad was zeroed after that backward and before the optimizer step "
                "(zero_grad(set_to_none=False) between backward and step): the step used a "
                "zero gradient")
    if a.change in ("reset", "zeroed") and a.when == "end":
        how = "reset to None" if a.change == "reset" else "zeroed"
        moved = eventfindings.moved_since(w, eventfindings.last_forward(r))
        if moved is False:
            return (f"; .grad was {how} after that backward and before the with block ended, "
                    f"with no update seen in between (no optimizer step holding it, "
                    f"{eventfindings.probe_name(w)} unchanged; zero_grad between backward and "
                    f"step?)")
        return (f"; .grad was {how} before the with block ended, after the parameters "
                f"changed (an update, then zero_grad)")
    when = "the optimizer step began" if a.when == "step" else "the with block ended"
    unscale = ("" if a.unscale is None else
               f"; a GradScaler's unscale_ divided .grad by its scale, "
               f"{eventfindings.scale_text(a.unscale)}, after that backward (observed)")
    if a.change == "unscaled":
        return unscale + f", and .grad held that when {when}"
    if a.change == "scaled" and a.factor is not None and a.when is not None:
        what = "what backward left there" if a.unscale is None else "that"
        base = a.after if a.unscale is None or a.after is None else a.after * a.unscale
        return (f"{unscale}; .grad held {fmt(a.seen)} when {when}, {fmt(a.factor, 3)} times "
                f"{what} ({fmt(base)}): "
                f"changed after backward (clipping, "
                f"{'a ' if a.unscale is None else 'another '}GradScaler's unscale_, or an edit)")
    if unscale:
        return unscale
    return ""


def _state_text(w: GradWatch, name: str, r: ParamRecord) -> str:
    from ...show.render import fmt

    state = r.state
    if state == "ok":
        text = f"{name} received a gradient of norm {fmt(r.grad)} from backward"
        opts = w.grads.seen_optimizers
        p = _param(w, name)
        if opts and p is not None and not any(q is p for h in opts for q in h.held):
            text += ("; no optimizer seen in the block (by its step or zero_grad) holds it, "
                     "so it is not updated (an optimizer built before its module was "
                     "replaced, or left out)")
        return text + _setting_text(w, r) + _after_text(w, r)
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
    in_loss = zerocauses.loss_made(w) or zerocauses.padding_text(w, [name])
    if in_loss:  # zero before it reached the model: nothing inside the model is the cause
        return f"{name} received a gradient that is exactly zero{in_loss}"
    dead = [c for c in w.modules if c.dead_units and c.dead_units[0]]
    text = f"{name} received a gradient that is exactly zero{where}"
    summed = zerocauses.cancelled(w, [name])
    if summed:
        return f"{name} received a gradient that is exactly zero{summed}"
    if not dead:
        text += zerocauses.float16_underflow(w)
    zeroed = [where for where, _, after in zerocauses.tensor_hooks(w) if after == 0.0]
    if zeroed:
        text += (f"; a hook on a tensor of the forward (Tensor.register_hook, registered "
                 f"{zeroed[0]}) replaced the gradient arriving there with zeros (observed: "
                 f"before and after the hooks on it)")
    if dead:
        c = dead[0]
        d, units = c.dead_units or (0, 0)
        text += (f"; module '{c.name}' ({c.kind}) had {d} of {units} units "
                 f"({c.unit_axis}) at 0 for every example and position of the batch "
                 f"({c.dead_support} per unit)")
    return text


def _setting_text(w: GradWatch, r: ParamRecord) -> str:
    """What the setting of the step did to ``r``'s gradient, as observed: a hook of the
    user's that changed it, the steps of several optimizers that read it, a read at another
    scale than the loss's (a ``GradScaler``), a backward DDP did not synchronise."""
    text = ""
    change = zerocauses.hook_change(r)
    if change is not None:
        text += (f" (after a hook registered on it, Tensor.register_hook: backward computed a "
                 f"gradient of norm {_f(change[0])})")
    twice = holds.stepped_twice(w)
    if twice is not None and r.name in twice[0]:
        text += (f"; the steps of {len(twice[1])} optimizers ({', '.join(twice[1])}) read "
                 f"this .grad with no backward in between: it was updated {twice[2]} times "
                 f"in this step, each time with the gradient of every loss")
    text += scales.param_text(w, r)
    unsynced = scales.ddp_unsynced(w)
    if unsynced is not None and r.name in unsynced[0]:
        text += (f"; under DDP its .grad was not averaged over the {w.world} processes: the "
                 f"backward before the read ran inside no_sync() (observed at its forward)")
    return text
