"""What can be wrong with a watched step, one function per finding, and the summary line.

Each finding is a function ``finding(w, options) -> Finding``: whether it could be checked on
this record, and the phrase for the problem it found (``None`` if none).  :data:`FINDINGS` is
the order the summary reports them in.  A new finding is one more function here, added to
:data:`FINDINGS`; :func:`problems` and :func:`summary` need no change.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import torch

from . import events
from .values import fmt_norm as _f

if TYPE_CHECKING:
    from .gradflow import GradWatch
    from .records import ModuleRecord, ParamRecord

__all__ = ["FINDINGS", "Finding", "Options", "problems", "summary"]


@dataclass(frozen=True)
class Options:
    """Thresholds of the findings (see :meth:`GradWatch.problems`)."""

    factor: float = 1e3
    dead_fraction: float = 0.5


@dataclass(frozen=True)
class Finding:
    """One check of a watched step: its name, whether it could run (and why not), what it
    found."""

    check: str
    ran: bool
    problem: str | None = None
    why_not: str = ""
    note: str = ""  # a fact worth saying that is not a problem
    expected: tuple[str, ...] = ()  # parameters whose zero gradient the note says is expected


def backward_stopped(w: GradWatch, o: Options) -> Finding:
    """The backward pass stopped with torch's error at a saved tensor modified in place after
    it was saved (read from the version counters of the saved tensors still on the graph)."""
    stop = w.stopped_at()
    if stop is None:
        return Finding("backward completed", True)
    at = ""
    if stop.call is not None and stop.call < len(w.modules):
        c = w.modules[stop.call]
        at = f", the output of module '{c.name}' ({c.kind})"
    what = f": {stop.what}" if stop.what else ""
    shown = ", ".join(stop.below[:3]) + (", ..." if len(stop.below) > 3 else "")
    return Finding("backward completed", True,
                   f"backward() stopped with an error at {stop.node}{at}: a tensor it saved for "
                   f"the backward was modified in place after it was saved{what}; no gradient "
                   f"reached the {len(stop.below)} parameter(s) below it ({shown}): {stop.fix}")


def nonfinite(w: GradWatch, o: Options) -> Finding:
    first = w.first_nonfinite()
    bad = [n for n, r in w.parameters.items() if r.state == "nonfinite"]
    if first is not None or bad:
        where = f" first sent by '{first.name}' ({first.kind})" if first else ""
        made = w._forward_nan
        then = ("; the model's output, the loss and every gradient through them hold NaN/Inf "
                "then")
        if made is not None and made[0] < len(w.modules) and made[1] == "input":
            c = w.modules[made[0]]
            where = (f": the forward pass met NaN/Inf in an input of module '{c.name}' "
                     f"({c.kind}) that has no history (the data, or a constant): check it with "
                     f"torch.isfinite(x).all() before the forward{then}")
        elif made is not None and made[0] < len(w.modules):
            c = w.modules[made[0]]
            where = (f": the forward pass already made NaN/Inf in module '{c.name}' ({c.kind}), "
                     f"whose input is finite and whose output is not{then}")
        elif first is None:
            # already NaN/Inf where it reached the model: made outside it (the loss)
            outer = [c for c in w.modules if c.parent is None and c.index not in w._late
                     and c.grad_out is not None and not math.isfinite(c.grad_out)]
            if outer:
                c = outer[0]
                where = (f": already NaN/Inf where it arrives at the output of '{c.name}' "
                         f"({c.kind}), so the loss, or what follows the model, made it")
        return Finding("non-finite", True,
                       f"non-finite gradient{where}: {len(bad)} parameter(s) got NaN/Inf")
    return Finding("non-finite", True)


def no_gradient(w: GradWatch, o: Options) -> Finding:
    none = [n for n, r in w.parameters.items() if r.requires_grad and r.grad is None
            and n not in w._replaced]  # re-created: named by that finding
    if none:
        shown = ", ".join(none[:3]) + (", ..." if len(none) > 3 else "")
        return Finding("missing gradients", True,
                       f"no gradient for {len(none)} parameter(s): {shown}{_ddp_unused(w)}")
    return Finding("missing gradients", True)


def _ddp_unused(w: GradWatch) -> str:
    """What parameters without a gradient do to ``DistributedDataParallel``, said only under
    DDP, and what the final ``.grad`` shows of it once the block has ended."""
    if w.engine != "DDP":
        return ""
    ddp = next(m for m in w.model.modules()
               if isinstance(m, torch.nn.parallel.DistributedDataParallel))
    if getattr(ddp, "find_unused_parameters", False):
        return " (DistributedDataParallel was built with find_unused_parameters=True: it skips them)"
    text = (" (under DistributedDataParallel without find_unused_parameters=True, the next "
            "forward raises \"Expected to have finished reduction in the prior iteration "
            "before starting a new one\": these are the parameters it waits for")
    got = [r for r in w.parameters.values() if r.grad is not None and r.final_known]
    if got and w.world > 1 and all(r.final == r.grad for r in got):
        text += (f"; this step's .grad was not averaged over the {w.world} processes: it "
                 f"equals this process's own gradient")
    return text + ")"


def vanishing_or_exploding(w: GradWatch, o: Options) -> Finding:
    """The gradient at the first layer against the last (see :meth:`GradWatch.problems`)."""
    layers = w.layers()
    # an exact zero is not a gradient that shrank over depth (see all_zero)
    flow = [c for c in layers if c.params and c.grad_out and math.isfinite(c.grad_out)]
    outs = [cast(float, c.grad_out) for c in flow]
    if not (len(flow) >= 2 and outs[-1] > 0):
        return Finding("vanishing/exploding", False,
                       why_not="fewer than two layers with parameters received a finite, "
                               "nonzero gradient")
    ratio = outs[0] / outs[-1]
    # the modules the ratio spans: the gradient from flow[-1]'s output to flow[0]'s
    span = [c for c in layers if flow[0].index < c.index <= flow[-1].index]
    if ratio <= 1 / o.factor:
        return Finding("vanishing/exploding", True,
                       f"vanishing gradient: {_orders(ratio)} orders of magnitude smaller "
                       f"at '{flow[0].name}' than at '{flow[-1].name}'"
                       f"{_sharpest(ratio, span)}")
    if ratio >= o.factor:
        return Finding("vanishing/exploding", True,
                       f"exploding gradient: {_orders(ratio)} orders of magnitude larger "
                       f"at '{flow[0].name}' than at '{flow[-1].name}'"
                       f"{_sharpest(ratio, span)}")
    return Finding("vanishing/exploding", True)


def cut_calls(w: GradWatch) -> list[tuple[ModuleRecord, str]]:
    """The calls of trainable modules whose outputs had no autograd history, each with the
    grad mode it ran in (``"no_grad"``, ``"inference_mode"`` or ``"on"``)."""
    return [(w.modules[i], mode) for i, mode in w._cut if i < len(w.modules)]


def unused_output_calls(w: GradWatch) -> list[ModuleRecord]:
    """The calls whose output has autograd history but received no gradient, of modules no
    call of which received one; calls that started after the backward (recomputation by
    checkpointing) do not count."""
    flowed = {c.name for c in w.modules if c.grad_out is not None}
    return [c for c in w.modules if c.out_shape is not None and c.grad_out is None
            and c.index not in w._late and c.name not in flowed]


def cut_from_the_graph(w: GradWatch, o: Options) -> Finding:
    """A module with parameters that require grad produced outputs without autograd history:
    its forward ran under ``torch.no_grad()`` (or its output was detached), so nothing flows
    back through that call."""
    cut = cut_calls(w)
    grad_mode = {c.index: mode for c, mode in cut}
    calls = [c for c, _ in cut]
    # reentrant checkpointing runs a forward without history on purpose and records it again
    # during backward: a module that got a gradient in another call of the step is not cut
    flowed = {c.name for c in w.modules if c.grad_out is not None}
    outer = [c for c in calls if (c.parent is None or c.parent not in grad_mode)
             and c.name not in flowed]
    if not outer:
        return Finding("cut from the graph", True)
    c = outer[0]
    more = f" (and {len(outer) - 1} other call(s))" if len(outer) > 1 else ""
    cause = CUT_CAUSE[grad_mode[c.index]]
    return Finding("cut from the graph", True,
                   f"module '{c.name}' ({c.kind}) produced an output without autograd history "
                   f"although its parameters require grad{more}: {cause}; no gradient flows "
                   f"back through that call")


CUT_CAUSE = {
    "no_grad": "it ran with gradients disabled (torch.no_grad() around it)",
    "inference_mode": "it ran under torch.inference_mode(), so its output is an inference "
                      "tensor that can never join a graph",
    "on": "grad mode was on, so its output was detached or its parameters are not used",
    "checkpoint": "it ran inside torch.utils.checkpoint with use_reentrant=True, which runs the "
                  "block without recording a graph and records it again during backward only "
                  "when an input of the checkpoint requires grad; none did (torch warns \"None "
                  "of the inputs have requires_grad=True\"), so backward never reaches the "
                  "block: pass use_reentrant=False, or give the checkpoint an input that "
                  "requires grad",
    "checkpoint-unreached": "it ran inside torch.utils.checkpoint with use_reentrant=True, "
                            "which records the block again during backward only when backward "
                            "reaches the checkpoint's output; it did not",
}


def output_unused(w: GradWatch, o: Options) -> Finding:
    """A module call whose output has autograd history but received no gradient in a step
    whose backward reached the model: nothing on the way to the loss used that output (an
    encoder state not passed on, an output detached after the module).  Calls that started
    after the backward (recomputation by checkpointing) do not count."""
    calls = w.modules
    if w.stopped_at() is not None:
        return Finding("outputs used", False,
                       why_not="backward() stopped with an error before reaching every module")
    unused = unused_output_calls(w)
    # an output that only fed calls which got no gradient themselves (their output unused, or
    # cut from the graph) is explained by them: name the last of the chain
    fed = {p for c in [*unused, *(c for c, _ in cut_calls(w))] for p in c.producers}
    unused = [c for c in unused if c.index not in fed]
    names = {c.name for c in unused}
    # the outermost such call
    outer = [c for c in unused if c.parent is None or calls[c.parent].name not in names]
    if not outer:
        return Finding("outputs used", True)
    c = outer[0]
    more = f" (and {len(outer) - 1} other module(s))" if len(outer) > 1 else ""
    got = [n for n, r in w.parameters.items() if r.module == c.name and r.grad]
    through = ""
    if got:
        through = (f"; its parameters still got a gradient ({', '.join(got[:2])}), through "
                   f"another path: a tied or shared weight")
    return Finding("outputs used", True,
                   f"module '{c.name}' ({c.kind}) returned an output with autograd history "
                   f"that received no gradient{more}: nothing on the way to the loss uses it "
                   f"(a returned state not passed on), or it is detached after the module"
                   f"{through}")


def dead_units(w: GradWatch, o: Options) -> Finding:
    for c in w.modules:
        if c.dead_units and c.dead_units[0] >= o.dead_fraction * c.dead_units[1]:
            return Finding("dead units", True,
                           f"dead units: '{c.name}' has {c.dead_units[0]} of "
                           f"{c.dead_units[1]} units ({c.unit_axis}) at 0 for every example "
                           f"and position of the batch")
    return Finding("dead units", True)


def _of_module(w: GradWatch, params: list[str]) -> str:
    """Parameters by name, each with the module that holds it."""
    return ", ".join(f"{n} (of module '{w.parameters[n].module}')" if n in w.parameters else n
                     for n in params)


def _shown(names: list[str], k: int = 2) -> str:
    return ", ".join(names[:k]) + (", ..." if len(names) > k else "")


def all_zero(w: GradWatch, o: Options) -> Finding:
    """Parameters whose gradient is exactly zero.  Where every path to one passes through a
    product with an all-zero parameter (read from the graph and the values at the backward),
    the factor is named; a zero-initialised factor of a product of parameters that gets a
    nonzero gradient itself (LoRA's ``B`` at the first step: ``A`` behind it) is a note, not a
    problem: it lasts until the factor moves."""
    zero = [n for n, r in w.parameters.items() if r.state == "zero"]
    if not zero:
        return Finding("all-zero", True)
    blocked = w._zero_blocked or {}
    explained = [n for n in zero if n in blocked]
    rest = [n for n in zero if n not in blocked]
    parts = []
    if explained:
        factors = list(dict.fromkeys(f for n in explained for f in blocked[n].factors))
        fshown, via = _of_module(w, factors), blocked[explained[0]].node
        moving = all(w.parameters[f].grad for f in factors if f in w.parameters)
        why = (f"every path to {'it' if len(explained) == 1 else 'them'} passes through a "
               f"product ({via}) with {fshown}, which {'was' if len(factors) == 1 else 'were'} "
               f"all zeros at this backward")
        one = len(factors) == 1
        gets, it = ("gets", "it") if one else ("get", "them")
        if not rest and moving and all(blocked[n].adjacent for n in explained):
            whose = (f"{explained[0]}'s gradient is" if len(explained) == 1 else
                     f"the gradients of {_shown(explained)} are")
            return Finding("all-zero", True, note=(
                f"{whose} exactly zero, as expected: {why}; {fshown} {gets} a nonzero "
                f"gradient, so the next optimizer step moves {it}, and a gradient reaches "
                f"{_shown(explained)} from then on (a factor initialised to zero, as LoRA's "
                f"B, does this at the first step)"), expected=tuple(explained))
        if moving:
            then = (f"{fshown} {gets} a nonzero gradient, so a gradient reaches "
                    f"{'it' if len(explained) == 1 else 'them'} once an optimizer step moves "
                    f"{it} (if {it} {'is' if one else 'are'} initialised to zero on purpose, "
                    f"as a ReZero gate, this lasts one step)")
        else:
            then = (f"{fshown} {gets} an exactly zero gradient too, so nothing moves: "
                    f"initialise one of the factors nonzero")
        parts.append(f"all-zero gradient for {len(explained)} parameter(s): "
                     f"{_shown(explained)}: {why}; {then}")
    if rest:
        first_zero = w.first_zero()
        where = (f" (the gradient first became all zero at '{first_zero.name}' "
                 f"({first_zero.kind}))" if first_zero else "")
        parts.append(f"all-zero gradient for {len(rest)} parameter(s): {_shown(rest)}{where}")
    return Finding("all-zero", True, "; ".join(parts))


def _who(k: int, total: int) -> str:
    return "every parameter" if k == total else f"{k} of {total} parameters"


def same_graph(w: GradWatch) -> str:
    """How passes with no forward of the model between them are described: on the same graph
    when a module's output received a gradient in two passes of the recorded step."""
    if w.backward_passes >= 2:
        return "retain_graph on the same graph"
    return "no forward of the watched model between them"


def accumulated(w: GradWatch, o: Options) -> Finding:
    """How many backward passes the final ``.grad`` of each parameter sums, counted by a hook
    after each accumulation, and what came between them (:func:`.events.accumulation`): a
    forward each (micro-batches: a note), an optimizer step (``zero_grad`` missing), nothing
    (several passes on one graph), or a gradient held from before the block."""
    received = [r for r in w.parameters.values() if r.requires_grad and r.grad is not None]
    got = [(r.name, events.accumulation(r.events, updates(w))) for r in received if r.events]
    if received and not any(r.passes for r in received):
        return Finding("accumulated", True, note=(
            "no backward pass accumulated into .grad: the gradients reached the parameters' "
            "hooks, and .grad was left as it was (torch.autograd.grad, or backward(inputs=...) "
            "without them)"))
    if not got:
        return Finding("accumulated", True)
    total = len(got)
    by_kind: dict[str, list[tuple[str, events.Accumulation]]] = {}
    for name, acc in got:
        by_kind.setdefault(acc.kind, []).append((name, acc))
    found, notes = [], []
    if "steps" in by_kind:
        k = len(by_kind["steps"])
        found.append(f".grad already held a gradient for {k} parameter(s) before this backward, "
                     f"although the parameters changed since the previous step in this with "
                     f"block (an optimizer step): zero_grad() is missing between steps")
    if "held" in by_kind:
        k = len(by_kind["held"])
        found.append(f".grad already held a gradient for {k} parameter(s) before the first "
                     f"backward pass in this with block (zero_grad() not called?)")
    same = by_kind.get("same-forward", [])
    if same:
        n = max(acc.passes for _, acc in same)
        who = _who(len(same), total)
        if all(acc.same for _, acc in same):
            found.append(f"{n} backward passes accumulated into {who} ({same_graph(w)}): the "
                         f"same gradient each time, so .grad holds {n} times one pass")
        else:
            notes.append(f".grad of {who} holds the sum of {n} backward passes "
                         f"({same_graph(w)}: losses backpropagated one after the other)")
    micro = by_kind.get("micro-batches", [])
    if micro:
        n = max(acc.passes for _, acc in micro)
        notes.append(f".grad holds the sum of this step's gradient and those of {n - 1} "
                     f"earlier forward/backward pass(es) in this with block, the parameters "
                     f"unchanged in between: gradient accumulation over micro-batches ({n} of "
                     f"them, .grad empty before the first; the record is the last one)")
    mixed = by_kind.get("mixed", [])
    if mixed:
        n = max(acc.passes for _, acc in mixed)
        m = max(acc.forwards for _, acc in mixed)
        notes.append(f".grad of {_who(len(mixed), total)} holds the sum of {n} backward passes "
                     f"over {m} forwards in this with block, the parameters unchanged in between")
    return Finding("accumulated", True, "; ".join(found) or None, note="; ".join(notes))


def updates(w: GradWatch) -> dict[int, float] | None:
    """The probe's readings at each forward, to tell updates by hand; ``None`` once an
    optimizer step was seen (then the steps themselves tell, per parameter: another
    optimizer's step changes the probe and not these parameters)."""
    return None if w._steps_seen else w._moved


def moved_since(w: GradWatch, forward: int) -> bool | None:
    """Whether the parameters changed between the start of call ``forward`` of the model and
    the end of the block (``None``: not read)."""
    start, end = w._moved.get(forward), w._moved_end
    if start is None or end is None:
        return None
    return not (start == end or (math.isnan(start) and math.isnan(end)))


def _probe_name(w: GradWatch) -> str:
    """The parameter whose sum tells whether an update ran (see :func:`moved_since`)."""
    return w._owner[w._probe][0] if w._probe is not None else "the parameters"


def _last_forward(r: ParamRecord) -> int:
    return max((n.forward for n in r.events if n.kind == "pass"), default=0)


def scale_cause(factor: float, total: float | None) -> str:
    """What scales every ``.grad`` by one ``factor``: a GradScaler's ``unscale_`` (1/2^k), or
    ``clip_grad_norm_`` (a factor below 1: max_norm / total norm), or an edit."""
    scale = 1 / factor
    k = round(math.log2(scale)) if scale > 1 else 0
    if k >= 1 and abs(scale / 2 ** k - 1) < 1e-4:
        return (f"1/{2 ** k}: a GradScaler's unscale_ divides by its scale, a power of 2, "
                f"{2 ** k} here")
    if factor < 1:
        norm = f", total norm {_f(total)}, so max_norm ≈ {_f(factor * total)}" if total else ""
        return (f"clip_grad_norm_{norm}: it rescales every .grad by one factor, max_norm / "
                f"total norm, when the total norm exceeds max_norm")
    return "an edit multiplied every .grad by one factor (clip_grad_norm_ only shrinks)"


WHEN = {"step": "the optimizer step", "end": "the end of the with block"}


def edited_after_backward(w: GradWatch, o: Options) -> Finding:
    """``.grad`` after this step's last backward pass against what it held at the next
    observed moment: when an optimizer step began, else when the block ended
    (:func:`.events.after_backward`).  A reset (None) or zeroing there, before a step, is
    ``zero_grad`` between backward and step; one factor for every parameter is clipping
    (``clip_grad_norm_``) or a ``GradScaler``'s ``unscale_``; anything else an edit."""
    params = [r for r in w.parameters.values() if r.grad is not None and r.events]
    if w.engine is not None and w.world > 1:
        how = "all-reduce" if w.engine == "DDP" else "reduce-scatter"
        return Finding("edited after backward", False,
                       why_not=f"under {w.engine}, .grad is to hold the average over the "
                               f"{w.world} processes ({how}); the record holds this process's "
                               f"gradient")
    if not params:
        return Finding("edited after backward", False, why_not="no parameter got a gradient")
    seen = [(r, events.after_backward(r.events)) for r in params]
    if all(a.when is None for _, a in seen):
        return Finding("edited after backward", False,
                       why_not="the with block has not ended (the final .grad is read then) "
                               "and no optimizer step began after the backward")
    total = len(seen)
    found = []
    for change, how in (("reset", "reset"), ("zeroed", "zeroed")):
        at_step = [r for r, a in seen if a.change == change and a.when == "step"]
        if at_step:
            what = ("found .grad None and skipped them" if change == "reset" else
                    "used zero gradients")
            call = "zero_grad" if change == "reset" else "zero_grad(set_to_none=False)"
            found.append(f".grad was {how} after backward and before the optimizer step for "
                         f"{_who(len(at_step), total)} ({call} between backward and step): "
                         f"the step {what}")
    at_end = [r for r, a in seen if a.change in ("reset", "zeroed") and a.when == "end"]
    if at_end:
        still = [r for r in at_end if moved_since(w, _last_forward(r)) is False]
        if still:
            ids = {id(r) for r in still}
            call = ("zero_grad" if any(a.change == "reset" for r, a in seen if id(r) in ids)
                    else "zero_grad(set_to_none=False)")
            found.append(f".grad was reset after backward and before the end of the with "
                         f"block for {_who(len(still), total)}, and no update was seen after "
                         f"that backward (no optimizer step holding them, {_probe_name(w)} "
                         f"unchanged) ({call} between backward and step?)")
        elif len(at_end) == total:
            return Finding("edited after backward", False,
                           why_not=".grad was cleared before the block ended (zero_grad inside "
                                   "it, after the parameters changed)")
    scaled = [(r, a) for r, a in seen if a.change == "scaled" and a.factor]
    compared = [(r, a) for r, a in seen if a.change in ("kept", "scaled")]
    if scaled:
        factors = [a.factor for _, a in scaled]
        r0, a0 = scaled[0]
        where = WHEN[a0.when or "end"]
        f0 = cast(float, a0.factor)
        if len(scaled) == len(compared) and max(factors) <= min(factors) * 1.001:
            norm = math.sqrt(sum(cast(float, a.after) ** 2 for _, a in scaled))
            who = "every parameter" if len(scaled) == total else f"{len(scaled)} parameters"
            found.append(f"gradients changed after backward: .grad of {who} is {_f(f0)} times "
                         f"what backward computed, scaled by one factor before {where} "
                         f"({scale_cause(f0, norm)})")
        else:
            found.append(f"gradients changed after backward for {len(scaled)} parameter(s) "
                         f"before {where}: {r0.name}'s .grad has norm {_f(a0.seen)}, backward "
                         f"left {_f(a0.after)} (× {_f(f0)}; clipping by value, a scaler or an "
                         f"edit)")
    return Finding("edited after backward", True, "; ".join(found) or None)


def replacement_text(w: GradWatch, name: str) -> str:
    """What the registration hook saw of parameter ``name``'s attribute (it must have been
    replaced: ``name in w._replaced``)."""
    rep = w._replaced[name]
    if rep.inside is not None and rep.inside[0] == rep.module:
        where = (f"in its forward: module '{rep.module}' ({rep.kind}) assigned a new "
                 f"nn.Parameter to '{rep.attribute}' during its own call")
    elif rep.inside is not None:
        where = (f"in the forward of module '{rep.inside[0]}' ({rep.inside[1]}): it assigned a "
                 f"new nn.Parameter to '{rep.attribute}' of module '{rep.module}' "
                 f"({rep.kind}) during its call")
    else:
        where = (f"outside the model's forward: module '{rep.module}' ({rep.kind}) was "
                 f"assigned a new nn.Parameter as '{rep.attribute}' between calls")
    times = f" ({rep.count} times)" if rep.count > 1 else ""
    r = w.parameters[name]
    if not w._backward_seen:
        old = "gets no gradient from the uses after the assignment"
    elif r.grad is None:
        old = "got no gradient"
    else:
        old = f"got a gradient of norm {_f(r.grad)} only from uses before the assignment"
    got = w._replacement_got.get(name)
    new = ("" if got is None else
           f"; the new tensor received a gradient of norm {_f(got)} from backward, which an "
           f"optimizer built before the forward never sees")
    return (f"{name} was re-created {where}{times} (observed: the attribute no longer holds the "
            f"tensor registered when the watch began), so the registered parameter, the one "
            f"an optimizer built before the forward holds, {old}{new}; create the parameter "
            f"once in __init__ and only use it in forward")


def recreated(w: GradWatch, o: Options) -> Finding:
    """A registered parameter's module attribute assigned a new ``nn.Parameter`` during the
    block, seen by the parameter registration hook (a parameter made in ``forward``)."""
    if not w._replaced:
        return Finding("re-created parameters", True)
    names = list(w._replaced)
    more = (f" (and {len(names) - 1} other parameter(s): {', '.join(names[1:3])}"
            f"{', ...' if len(names) > 3 else ''})" if len(names) > 1 else "")
    return Finding("re-created parameters", True, replacement_text(w, names[0]) + more)


FINDINGS: tuple[Callable[[Any, Options], Finding], ...] = (
    backward_stopped, nonfinite, recreated, no_gradient, cut_from_the_graph, output_unused,
    vanishing_or_exploding, dead_units, all_zero,
    accumulated, edited_after_backward,
)


def run(w: GradWatch, **kwargs: Any) -> list[Finding]:
    """Every finding, in order; none when no backward pass reached the model."""
    if not w._backward_seen:
        return [Finding("backward", True, "no backward pass reached the model")]
    options = Options(**kwargs)
    return [finding(w, options) for finding in FINDINGS]


def problems(w: GradWatch, **kwargs: Any) -> list[str]:
    """The phrases of the findings that found a problem, in order."""
    return [f.problem for f in run(w, **kwargs) if f.problem is not None]


def summary(w: GradWatch, *, checks: bool = True, **kwargs: Any) -> str:
    """One line: what is wrong with the recorded step's gradient flow, or that nothing is;
    then which checks ran and which could not (and why), and any frozen parameters."""
    results = run(w, **kwargs)
    found = [f.problem for f in results if f.problem is not None]
    frozen = [n for n, r in w.parameters.items() if not r.requires_grad]
    if found:
        line = "; ".join(found)
    else:
        flow = [c.grad_out for c in w.layers() if c.params and c.grad_out]
        spread = ""
        if len(flow) >= 2:
            spread = (f", norms at the layers within {_orders(max(flow) / min(flow))} "
                      f"orders of magnitude")
        which = "trainable parameter" if frozen else "parameter"
        expected = [n for f in results for n in f.expected]
        but = f" but {_shown(expected, 3)}" if expected else ""
        line = f"ok: every {which}{but} got a finite, nonzero gradient{spread}"
    for f in results:
        if f.note:
            line += f"; {f.note}"
    if frozen:
        shown = ", ".join(frozen[:3]) + (", ..." if len(frozen) > 3 else "")
        line += (f"; {len(frozen)} of {len(w.parameters)} parameters are frozen "
                 f"(requires_grad=False: backward skips them): {shown}")
    if w.engine is not None:
        line += (f"; {w.engine}, process {w.rank} of {w.world}: module and parameter norms are "
                 f"this process's gradients before they are averaged")
        if w.engine == "FSDP2":
            line += (" (FSDP2's unsharded parameters); .grad norms, of the sharded DTensors, "
                     "are global")
    if not checks:
        return line
    ran = [f.check for f in results if f.ran]
    skipped = [f"{f.check} ({f.why_not})" for f in results if not f.ran]
    line += f" [checked: {', '.join(ran)}"
    line += f"; not checked: {'; '.join(skipped)}]" if skipped else "]"
    return line


def _sharpest(ratio: float, span: list[ModuleRecord]) -> str:
    """``", most of it across 'name' (...)"`` when one module of ``span`` (the innermost modules
    between the first and last layer) accounts for at least half of the change ``ratio`` (first
    layer / last layer) and for at least one order of magnitude by itself; else ``""``. Read
    from the recorded norms at the module's output and input, nothing else."""
    total = math.log10(ratio)
    best, best_change = None, 0.0
    for c in span:
        if not (c.grad_out and c.grad_in) or not (
                math.isfinite(c.grad_out) and math.isfinite(c.grad_in)):
            continue
        change = math.log10(c.grad_in / c.grad_out)  # < 0: shrank on its way through
        if change * total > 0 and abs(change) > abs(best_change):
            best, best_change = c, change
    if best is None or abs(best_change) < max(1.0, abs(total) / 2):
        return ""
    return (f", most of it across '{best.name}' ({best.kind}: {_f(best.grad_out)} at its "
            f"output, {_f(best.grad_in)} at its input)")


def _orders(ratio: float) -> str:
    return f"{abs(math.log10(ratio)):.1f}"
