"""The findings read from observed events (:mod:`.events`): several backward passes
accumulated into ``.grad`` (a ``GradScaler``'s: :mod:`.scales`), a ``.grad`` reset, zeroed or
rescaled between the backward and the optimizer step (or between passes: :mod:`.partialedits`),
a parameter re-created by an assignment.  Each is a finding like those of :mod:`.findings`,
listed there in :data:`FINDINGS`; one from the graph or the values goes in :mod:`.findings`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, cast

from ..graph.values import fmt_norm as _f
from . import events, inputpasses
from .finding import Finding, Options, shown
from .partialedits import scaled_between_passes

if TYPE_CHECKING:
    from .records import ParamRecord
    from .watch import GradWatch


def _who(k: int, total: int) -> str:
    return "every parameter" if k == total else f"{k} of {total} parameters"


def same_graph(w: GradWatch) -> str:
    """How passes with no forward of the model between them are described: on the same graph
    when a module's output received a gradient in two passes of the recorded step."""
    return ("retain_graph on the same graph" if w.backward_passes >= 2
            else "no forward of the watched model between them")


def accumulated(w: GradWatch, o: Options) -> Finding:
    """How many backward passes the final ``.grad`` of each parameter sums, counted by a hook
    after each accumulation, and what came between them (:func:`.events.accumulation`): a
    forward each (micro-batches: a note), an optimizer step (``zero_grad`` missing), nothing
    (several passes on one graph), or a gradient held from before the block."""
    received = [r for r in w.parameters.values() if r.requires_grad and r.grad is not None]
    got = [(r.name, events.accumulation(r.events, updates(w), events.step_forwards(w.grads.log)))
           for r in received if r.events]
    if received and not any(r.passes for r in received):
        return Finding("accumulated", True, note=(
            "no backward pass accumulated into .grad: the gradients reached the parameters' "
            "hooks, and .grad was left as it was (torch.autograd.grad, or backward(inputs=...) "
            "without them)"))
    if not got or w.closures.found is not None:  # summed by a closure's evaluations: named there
        return Finding("accumulated", True)
    total = len(got)
    by_kind: dict[str, list[tuple[str, events.Accumulation]]] = {}
    for name, acc in got:
        by_kind.setdefault(acc.kind, []).append((name, acc))
    found, notes = [], []
    if "steps" in by_kind:
        # the stale sum matters when an optimizer step reads it: a GAN's discriminator gets
        # the generator's loss gradient after its own step, and its optimizer never reads it
        read = {name for name, _ in by_kind["steps"] if _read_after_last_pass(w, name)}
        unread = [name for name, _ in by_kind["steps"] if name not in read]
        if unread and w.parameters[unread[0]].final_known:
            notes.append(f".grad of {len(unread)} parameter(s) ({shown(unread, 3)}) sums "
                         f"gradients from before and after an update of the parameters (an "
                         f"optimizer step or an edit), but no optimizer step read that sum "
                         f"in this with block (observed: no step holding them after their "
                         f"last backward); zero_grad() before their optimizer's next step "
                         f"discards it (a GAN's discriminator receives the generator's loss "
                         f"this way)")
            by_kind["steps"] = [(n, a) for n, a in by_kind["steps"] if n in read]
            if not by_kind["steps"]:
                del by_kind["steps"]
    if "steps" in by_kind:
        k = len(by_kind["steps"])
        found.append(f".grad already held a gradient for {k} parameter(s) before this backward, "
                     f"although the parameters changed since its previous pass (observed: an "
                     f"optimizer step, or their values edited in place): zero_grad() is missing")
    if cut := by_kind.get("cut"):
        notes.append(f".grad of {_who(len(cut), total)} holds the sum of more than "
                     f"{max(a.passes for _, a in cut)} backward passes in this with block; the "
                     f"earliest were not kept (at most {events.KEPT} notes per parameter), so "
                     f"whether .grad was empty before the first could not be checked")
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
    if micro and inputpasses.summed(w) is None:  # else input-gradient passes: :mod:`.inputpasses`
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


def _read_after_last_pass(w: GradWatch, name: str) -> bool:
    """Whether an optimizer step holding parameter ``name`` began after its last pass."""
    ev = w.parameters[name].events
    last = max((i for i, n in enumerate(ev) if n.kind == "pass"), default=-1)
    return any(n.kind == "step" for n in ev[last + 1:])


def updates(w: GradWatch) -> dict[int, float]:
    """The probe's readings at each forward, to tell updates by hand (between two forwards
    with an optimizer step between them, the steps tell: :func:`.events.accumulation`)."""
    return dict(w.grads.moved)


def moved_since(w: GradWatch, forward: int) -> bool | None:
    """Whether the parameters changed between the start of call ``forward`` of the model and
    the end of the block (``None``: not read)."""
    start, end = w.grads.moved.get(forward), w.grads.moved_end
    if start is None or end is None:
        return None
    return not (start == end or (math.isnan(start) and math.isnan(end)))


def probe_name(w: GradWatch) -> str:
    """The parameter whose sum tells whether an update ran (see :func:`moved_since`)."""
    return w.grads.probe_name


def last_forward(r: ParamRecord) -> int:
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


def scale_text(factor: float) -> str:
    """The scale a ``GradScaler``'s ``unscale_`` divided by (``factor`` = 1 / scale)."""
    scale = 1 / factor
    return f"{scale:.0f}" if scale == round(scale) else _f(scale)


def edited_after_backward(w: GradWatch, o: Options) -> Finding:
    """``.grad`` after this step's last backward pass against what it held at the next
    observed moment: when an optimizer step began, else when the block ended
    (:func:`.events.after_backward`).  A reset (None) or zeroing there, before a step, is
    ``zero_grad`` between backward and step; one factor for every parameter is clipping
    (``clip_grad_norm_``) or a ``GradScaler``'s ``unscale_`` unobserved; anything else an
    edit.  What an observed ``unscale_`` did is :func:`.scales.loss_scale`'s; the change is read beyond
    it."""
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
            kept = ("" if change == "reset" else
                    "; zeroing works in place, so a reference kept to .grad (g = p.grad, "
                    "without .clone()) reads zeros from then on too")
            found.append(f".grad was {how} after backward and before the optimizer step for "
                         f"{_who(len(at_step), total)} ({call} between backward and step): "
                         f"the step {what}{kept}")
    at_end = [r for r, a in seen if a.change in ("reset", "zeroed") and a.when == "end"]
    if at_end:
        still = [r for r in at_end if moved_since(w, last_forward(r)) is False]
        if still:
            ids = {id(r) for r in still}
            call = ("zero_grad" if any(a.change == "reset" for r, a in seen if id(r) in ids)
                    else "zero_grad(set_to_none=False)")
            found.append(f".grad was reset after backward and before the end of the with "
                         f"block for {_who(len(still), total)}, and no update was seen after "
                         f"that backward (no optimizer step holding them, {probe_name(w)} "
                         f"unchanged) ({call} between backward and step?)")
        elif len(at_end) == total:
            return Finding("edited after backward", False,
                           why_not=".grad was cleared before the block ended (zero_grad inside "
                                   "it, after the parameters changed)")
    scaled = [(r, a) for r, a in seen if a.change == "scaled" and a.factor]
    compared = [(r, a) for r, a in seen if a.change in ("kept", "scaled")]
    if scaled:
        factors = [cast(float, a.factor) for _, a in scaled]
        r0, a0 = scaled[0]
        where = WHEN[a0.when or "end"]
        f0 = cast(float, a0.factor)
        if len(scaled) == len(compared) and max(factors) <= min(factors) * 1.001:
            norm = math.sqrt(sum(cast(float, a.after) ** 2 for _, a in scaled))
            who = "every parameter" if len(scaled) == total else f"{len(scaled)} parameters"
            beyond = (f", beyond the GradScaler's unscale_ (1/{scale_text(a0.unscale)})"
                      if a0.unscale is not None else "")
            if a0.unscale is not None:
                norm *= a0.unscale
            found.append(f"gradients changed after backward: .grad of {who} is {_f(f0)} times "
                         f"what backward computed{beyond}, scaled by one factor before {where} "
                         f"({scale_cause(f0, norm)})")
        elif (clip := _clipped_each(scaled)) is not None:
            found.append(f"gradients changed after backward for {len(scaled)} parameter(s) "
                         f"before {where}: each now has norm {_f(clip)} (backward left "
                         f"{_f(min(a.after or 0 for _, a in scaled))} to "
                         f"{_f(max(a.after or 0 for _, a in scaled))}): each tensor "
                         f"clipped to norm {_f(clip)} on its own (clip_grad_norm_ called per "
                         f"parameter, not the total norm), which changes the direction of the "
                         f"whole gradient; clip_grad_norm_(model.parameters(), {_f(clip)}) "
                         f"scales every tensor by one factor")
        else:
            found.append(f"gradients changed after backward for {len(scaled)} parameter(s) "
                         f"before {where}: {r0.name}'s .grad has norm {_f(a0.seen)}, backward "
                         f"left {_f(a0.after)} (× {_f(f0)}; clipping by value, a scaler or an "
                         f"edit)")
    if (between := scaled_between_passes(r for r, _ in seen)) is not None:
        k, n, fs = between
        found.append(f".grad was also scaled by one factor between backward passes that accumulate"
                     f" into it, at {k} of the {n - 1} points between the {n} passes (× "
                     f"{', '.join(_f(f) for f in fs[:4])}): clip_grad_norm_ inside the accumulation"
                     f" loop clips each partial sum, so the step reads neither the micro-batches' "
                     f"summed gradient nor that sum clipped; clip once, after the last backward")
    return Finding("edited after backward", True, "; ".join(found) or None)


def _clipped_each(scaled: list[Any]) -> float | None:
    """The norm every scaled ``.grad`` now has when two or more were scaled down by
    different factors to one norm: each tensor clipped to it alone (``clip_grad_norm_`` per
    parameter); ``None`` otherwise."""
    now = [a.seen for _, a in scaled]
    factors = [a.factor for _, a in scaled]
    if (len(scaled) < 2 or not all(isinstance(v, float) and v > 0 for v in now)
            or not all(f is not None and f < 1 for f in factors)
            or max(factors) <= min(factors) * 1.001 or max(now) > min(now) * 1.001):
        return None
    return max(now)


def replacement_text(w: GradWatch, name: str) -> str:
    """What the registration hook saw of parameter ``name``'s attribute (it must have been
    replaced: ``name in w.grads.replaced``)."""
    rep = w.grads.replaced[name]
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
    if not w.watched.backward_seen:
        old = "gets no gradient from the uses after the assignment"
    elif r.grad is None:
        old = "got no gradient"
    else:
        old = f"got a gradient of norm {_f(r.grad)} only from uses before the assignment"
    got = w.grads.replacement_got.get(name)
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
    if not w.grads.replaced:
        return Finding("re-created parameters", True)
    names = list(w.grads.replaced)
    more = f" (and {len(names) - 1} other parameter(s): {shown(names[1:], 2)})" if names[1:] else ""
    return Finding("re-created parameters", True, replacement_text(w, names[0]) + more)


def after_step(notes: tuple[events.Note, ...]) -> tuple[float, float] | None:
    """``(read, end)``: the norm of ``.grad`` the last optimizer step holding the parameter
    read, and its norm when the block ended, when no backward pass came in between and both
    are finite and nonzero; else ``None``."""
    last_step = max((i for i, n in enumerate(notes) if n.kind == "step"), default=None)
    if last_step is None:
        return None
    later = notes[last_step + 1:]
    if any(n.kind == "pass" for n in later):
        return None
    end = next((n for n in later if n.kind == "end"), None)
    read = notes[last_step].held
    if not notes[last_step].measured:  # the probe showed .grad as its pass left it
        passes = [i for i, n in enumerate(notes[:last_step]) if n.kind == "pass"]
        read = notes[passes[-1]].after if passes else None
        for n in notes[passes[-1] + 1:last_step] if passes else ():
            if n.kind == "unscale" and n.factor is not None and read is not None:
                read *= n.factor  # a GradScaler's unscale_ in between, observed
    if end is None or end.held is None or read is None:
        return None
    if not (math.isfinite(read) and math.isfinite(end.held)) or read == 0.0 or end.held == 0.0:
        return None
    return read, end.held


def edited_after_step(w: GradWatch, o: Options) -> Finding:
    """``.grad`` read by the last optimizer step against ``.grad`` when the block ended, no
    backward pass in between: every ``.grad`` scaled by one factor below 1 is a
    ``clip_grad_norm_`` after ``optimizer.step()`` (the step used the unclipped gradient).
    Cleared or zeroed there is the usual ``zero_grad`` after the step: nothing to say."""
    if not w.grads.steps_seen:
        return Finding("edited after step", False, why_not="no optimizer step was seen")
    if w.engine == "FSDP2":
        return Finding("edited after step", False,
                       why_not="under FSDP2 .grad is not read at the step (the norm of a "
                               "sharded DTensor is a collective)")
    seen = [(r, after_step(r.events)) for r in w.parameters.values() if r.events]
    pairs = [(r, p) for r, p in seen if p is not None]
    if not pairs:
        return Finding("edited after step", True)
    changed = [(r, p) for r, p in pairs if abs(p[1] / p[0] - 1) > 1e-4
               and not w.left.untouched(r.name)]  # not made by the step itself
    if not changed:
        return Finding("edited after step", True)
    factors = [p[1] / p[0] for _, p in changed]
    f0 = factors[0]
    one = len(changed) == len(pairs) and max(factors) <= min(factors) * 1.001
    read = math.sqrt(sum(p[0] ** 2 for _, p in pairs))
    if one and f0 < 1:
        cause = (f"clip_grad_norm_ after optimizer.step(): it rescaled every .grad (total norm "
                 f"{_f(read)} to {_f(read * f0)}) after the step had read the unclipped "
                 f"gradient, so the clip had no effect on this update; call it between "
                 f"backward() and optimizer.step()")
    else:
        cause = ("an edit of .grad after optimizer.step() has no effect on that step's "
                 "update")
    who = _who(len(changed), len(pairs))
    return Finding("edited after step", True,
                   f"gradients changed after the optimizer step: .grad of {who} is "
                   f"{_f(f0)} times what the step read (observed: the step's reading and the "
                   f"end of the with block, no backward in between): {cause}")


def edit_discarded(w: GradWatch, o: Options) -> Finding:
    """An out-of-place call on a parameter's ``.grad`` between a backward and the optimizer
    step whose result was freed unused (observed: :mod:`.gradedits`): ``.grad`` is as the
    backward left it, so the optimizer reads the gradient unedited."""
    found = w.edits.discarded
    if not found:
        return Finding("edits of .grad kept", True)
    d = found[0]
    names = sorted({e.name for e in found if e.op == d.op})
    more = f" and {len(names) - 1} more parameter(s)" if len(names) > 1 else ""
    at = f" at {d.site}" if d.site else ""
    return Finding("edits of .grad kept", True, (
        f"{d.op}() on the .grad of {d.name}{more} made a new tensor that was thrown "
        f"away{at} (observed: the result was freed without being used or assigned): the "
        f"call is not in-place and left .grad unchanged, so the optimizer reads the gradient "
        f"the backward left; use the in-place form ({d.op}_()) or assign the result to "
        f"p.grad"))


def _leaked(log: list[events.Entry], k: int) -> tuple[list[int], events.StepEntry] | None:
    """For the optimizer step ``log[k]``: the parameters (their positions in its ``held``)
    whose ``.grad`` holds a pass from before another optimizer's step that held none of
    them and one from after it (:func:`_fresh_passes`), the backward passes after that other
    step reaching none of its parameters; and that other step."""
    step = cast(events.StepEntry, log[k])
    mine = {id(p): i for i, p in enumerate(step.held)}
    leaked: list[int] = []
    other: events.StepEntry | None = None
    for key, kept in _fresh_passes(log, k).items():
        at_other = [i for i in range(kept[0] + 1, kept[-1])
                    if isinstance(log[i], events.StepEntry)
                    and cast(events.StepEntry, log[i]).by != step.by
                    and not any(id(p) in mine for p in cast(events.StepEntry, log[i]).held)]
        if not at_other:
            continue
        theirs = cast(events.StepEntry, log[at_other[-1]])
        held = {id(p) for p in theirs.held}
        # the losses after that step reach none of its parameters: this optimizer's own loss,
        # while the one before it was the other model's (a loss both share reaches both)
        if not any(isinstance(x, events.PassEntry) and id(x.param) in held
                   for x in log[at_other[-1] + 1:k]):
            leaked.append(mine[key])
            other = other or theirs
    return (leaked, other) if leaked and other is not None else None


def grad_leaked(w: GradWatch, o: Options) -> Finding:
    """An optimizer step that read a ``.grad`` holding the gradient of a loss backpropagated
    before another optimizer's step (holding none of its parameters), with no clearing since:
    a GAN whose generator is trained first, its loss reaching the discriminator's ``.grad``,
    and the discriminator's step reading that sum (:func:`_leaked`)."""
    log = w.grads.log
    names = {id(p): v[0] for p, v in w.watched.owner.items()}
    for k, e in enumerate(log):
        if not isinstance(e, events.StepEntry):
            continue
        found = _leaked(log, k)
        if found is None:
            continue
        leaked, other = found
        shown = [names.get(id(e.held[i]), "?") for i in leaked]
        more = f", ... ({len(shown)} in all)" if len(shown) > 3 else ""
        return Finding("gradients of other losses", True, (
            f"{e.optimizer}.step() read a .grad that also holds the gradient of a loss "
            f"backpropagated before {other.optimizer}.step() (another optimizer, holding none "
            f"of them) for {', '.join(shown[:3])}{more} (observed: a backward pass into them "
            f"before that step and one after it, no zero_grad between): the other model's loss "
            f"(a GAN's generator loss through the discriminator) was added to this step's "
            f"gradient; call this optimizer's zero_grad() right before its own backward"))
    return Finding("gradients of other losses", True)


def _fresh_passes(log: list[events.Entry], k: int) -> dict[int, list[int]]:
    """For the optimizer step ``log[k]``: each held parameter's passes (positions in ``log``)
    since this optimizer's previous step, from the last one that found ``.grad`` empty."""
    step = cast(events.StepEntry, log[k])
    mine = {id(p) for p in step.held}
    passes: dict[int, list[int]] = {}
    j = k - 1
    while j >= 0 and not (isinstance(log[j], events.StepEntry) and
                          cast(events.StepEntry, log[j]).by == step.by):
        e = log[j]
        if isinstance(e, events.PassEntry) and id(e.param) in mine:
            passes.setdefault(id(e.param), []).append(j)
        j -= 1
    out: dict[int, list[int]] = {}
    for key, at in passes.items():  # latest first
        fresh = next((i for i in at if cast(events.PassEntry, log[i]).held in (None, 0.0)),
                     at[-1])
        out[key] = sorted(i for i in at if i >= fresh)
    return out


def modes_mixed(w: GradWatch, o: Options) -> Finding:
    """An optimizer step whose ``.grad`` sums backward passes of losses computed with the model
    in eval mode and in train mode (observed: the model's mode at each of its calls, and the
    call each pass followed): a validation loss backpropagated, without a step or
    ``zero_grad``, into the next training step."""
    log, modes = w.grads.log, w.modes.calls
    for k, e in enumerate(log):
        if not isinstance(e, events.StepEntry):
            continue
        seen = {modes[f - 1][0] for at in _fresh_passes(log, k).values() for i in at
                if 0 < (f := cast(events.PassEntry, log[i]).forward) <= len(modes)}
        if seen == {True, False}:
            return Finding("modes of the losses", True, (
                f"{e.optimizer}.step() read a .grad that sums the gradients of losses computed "
                f"with the model in eval mode and in train mode (observed: model.training at "
                f"each call of the model, and the call each backward pass followed): a "
                f"validation loss was backpropagated into the training step's gradient; compute "
                f"validation losses under torch.no_grad(), or call zero_grad() before training"))
    return Finding("modes of the losses", True)
