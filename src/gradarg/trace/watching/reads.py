"""What the optimizer will read, checked: the findings behind a summary's "ok".

"ok" is a claim about the ``.grad`` an optimizer reads, so it is checked where it is read: at
each optimizer step (a step pre-hook reads the norm of every ``.grad`` the step holds) and at
the end of the ``with`` block.  The findings here report what stands between the record and
that claim: the exception that ended the block (:func:`block_ended`), tensors that require grad
and feed the forward without being registered parameters (:func:`not_registered`), an
optimizer that holds tensors the model no longer has (a module replaced after the optimizer
was built) and frozen parameters an optimizer step still moved (:func:`optimizer_holds`), and
non-finite ``.grad`` read by a step (:func:`optimizer_read`).  :func:`checked` says, for the
"ok" line, what was checked, or why nothing could be.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import torch

from .finding import Finding, Options, shown
from .masters import master_copies
from .ranks import first_nonfinite
from .scales import ddp_unsynced
from .schedules import zero_lr_cause
from .stepmoves import SAMPLE

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = [
    "block_ended",
    "checked",
    "gone",
    "not_registered",
    "optimizer_holds",
    "optimizer_read",
    "scaler_skipped",
    "step_unmoved",
    "stepped_twice",
]



def gone(w: GradWatch) -> list[str]:
    """Parameters the watch began with that the model no longer holds (read now): their
    module was replaced, or the attribute re-assigned, while the watch ran."""
    now = {id(p) for p in w.model.parameters()}
    return [name for p, (name, _) in w.watched.owner.items() if id(p) not in now]


def block_ended(w: GradWatch, o: Options) -> Finding:
    """The ``with`` block ended with an exception (seen by its ``__exit__``): what raised and
    where; when a ``backward()`` raised it, what was observed before: an optimizer step after
    the forward (an in-place update of parameters the backward needs), or a graph freed by an
    earlier backward (a state carried over from a previous batch)."""
    e = w.grads.ended
    if e is None:
        return Finding("block ended normally", True)
    by = "backward() raised" if e.by_backward else "raised"
    where = f" at {e.where}" if e.where else ""
    text = (f"the with block ended with an exception: {e.kind} {by}{where} (observed: the "
            f"block's exit): {e.message}")
    lower = e.message.lower()
    if e.by_backward and "inplace operation" in lower:
        for s in w.grads.steps_since(w.watched.forwards):
            moved = w.calls.noted.changed_since_forward(s.held)
            if moved:
                names = [w.watched.owner[p][0] for p in moved]
                text += (f"; an optimizer step ({s.optimizer or 'optimizer'}) ran before that "
                         f"backward and updated in place {shown(names, 3)} after the forward "
                         f"had used them (observed: their version counters went up after "
                         f"their module's call): call backward() for every loss before any "
                         f"optimizer step, or run the forward again after it")
                break
    elif e.by_backward and "second time" in lower:
        text += ("; the graph this backward reaches was freed by an earlier backward: a "
                 "tensor carried over from a previous batch or step (an RNN's hidden state) "
                 "still holds its history: detach it between batches (h = h.detach())")
    elif "finished reduction" in lower and w.grads.prior_missing:
        missed = w.grads.prior_missing
        text += (f"; in the step before, no gradient reached {shown(missed, 3)} (observed: no "
                 f"backward pass reached them; their module was skipped or its output "
                 f"unused): DistributedDataParallel without find_unused_parameters=True waits "
                 f"for every parameter's gradient before it all-reduces, so that step's "
                 f"gradients were never averaged (each process stepped on its own) and this "
                 f"forward raised; pass find_unused_parameters=True, or use every parameter "
                 f"in each step")
    text += "; what the optimizer would read after it was not checked"
    return Finding("block ended normally", True, text)


def step_raised(w: GradWatch, o: Options) -> Finding:
    """An optimizer step that began and never ended inside the block (observed: its step
    pre-hook ran, its post-hook did not): it raised and the exception was caught, so the
    parameters it holds were not updated by it (or only partly)."""
    open_steps = list(w.grads.unfinished_steps.values())
    if not open_steps or w.grads.ended is not None:  # a block ended by it: named there
        return Finding("steps finished", True)
    return Finding("steps finished", True, (
        f"an optimizer step raised and the exception was caught inside the block: "
        f"{open_steps[0]}.step() began and never finished (observed: the optimizer's step "
        f"pre-hook ran and its post-hook did not), so it did not update the parameters it "
        f"holds; let the error propagate to read it (a sparse optimizer given a dense "
        f"gradient, a tensor of another device or dtype...)"))


def not_registered(w: GradWatch, o: Options) -> Finding:
    """Leaf tensors that require grad and fed this step's forward without being registered
    parameters of the model (read from the graph, not inferred)."""
    if w.engine == "FSDP2":
        return Finding("unregistered tensors", False,
                       why_not="under FSDP2 the forward computes with unsharded copies of the "
                               "registered parameters, which are not registered themselves")
    found = w.graph.unregistered()
    if not found:
        return Finding("unregistered tensors", w.watched.backward_seen or not w.watched.active)
    named = [f"{u.where or 'a tensor'} (shape {tuple(u.shape)})" for u in found]
    lost = [u for u in found if not u.optimized]
    if all(u.later for u in found):
        what = (f"{len(found)} tensor(s) that require grad feed the model's forward but were "
                f"not parameters of the model when the watch began: {shown(named, 3)}")
    else:
        what = (f"{len(found)} tensor(s) that require grad feed the model's forward but are "
                f"not registered parameters of the model: {shown(named, 3)}; "
                f"model.parameters() does not list them")
    if not lost:
        return Finding("unregistered tensors", True, note=(
            what + ", though an optimizer that stepped holds them (state_dict() does not "
                   "save them)"))
    who = ("no optimizer that stepped holds them" if w.grads.steps_seen else
           "no optimizer seen holds them" if w.grads.seen_optimizers else
           "an optimizer built from model.parameters() never holds them")
    return Finding("unregistered tensors", True,
                   f"{what}, so {who}: they get .grad but are never updated (observed: "
                   f"reached from the model's output in the graph)")


def optimizer_holds(w: GradWatch, o: Options) -> Finding:
    """What the optimizers whose step ran hold: tensors that are not parameters of the model
    (with parameters no optimizer holds: a module replaced after the optimizer was built, or
    float32 master copies, :mod:`.masters`; an optimizer holding only such tensors is seen by
    its step or ``zero_grad`` too); frozen parameters a step moved; parameters that got a
    gradient no optimizer that stepped holds (a problem), or none (a note)."""
    opts = w.grads.seen_optimizers
    left_model = [n for n in gone(w) if n not in w.grads.replaced]
    if left_model:
        modules = list(dict.fromkeys(w.parameters[n].module for n in left_model))
        new = [u for u in w.graph.unregistered() if u.later]
        held_old = any(w.watched.owner[p][0] in left_model for h in opts for p in h.held)
        text = (f"module {shown([repr(m) for m in modules], 3)} was replaced while the watch ran "
                f"(observed: the model no longer holds {shown(left_model, 3)}, the parameters "
                f"it had when the watch began)")
        if held_old:
            text += (": the optimizer holds the old module's tensors, so the new module never"
                     " moves; build the optimizer after replacing it (or add the new parameters)")
        elif new:
            text += ": an optimizer built before the replacement does not hold the new one"
        replaced = [text]
    else:
        replaced = []
    strays = w.grads.stray_optimizers
    if not opts and not strays and not w.grads.stray_steps_seen:
        if replaced:
            return Finding("what the optimizer holds", True, replaced[0])
        return Finding("what the optimizer holds", False,
                       why_not="no optimizer step or zero_grad was seen")
    stepped = w.grads.steps_seen or w.grads.stray_steps_seen
    # with a step seen, "held" means held by an optimizer whose step ran in the block
    held = {p for h in (w.grads.optimizers if stepped else opts) for p in h.held}
    owner = w.watched.owner
    gone_now = set(left_model)
    left = [name for p, (name, _) in owner.items()
            if p.requires_grad and p not in held and name not in gone_now]
    # an optimizer that holds no parameter of the model matters only when some of the
    # model's parameters are left without one (else it is another model's: a GAN's other half)
    # (and its tensors have the shapes of some of them: else another model's optimizer)
    shapes_left = {tuple(w.parameters[n].shape) for n in left}
    strays = [h for h in strays if any(tuple(f.shape) in shapes_left for f in h.foreign)]
    foreign = [f for h in (*opts, *strays) for f in h.foreign]
    unapplied = [n for n in left if w.parameters[n].grad is not None] if stepped else []
    found, note = replaced, ""
    if foreign:
        shapes = [tuple(f.shape) for f in foreign]
        if left and (copies := master_copies(w, foreign, left)):
            note, left, unapplied = copies, [], []  # not a replaced module: masters.py
        elif left:
            same = [n for n in left if tuple(w.parameters[n].shape) in shapes]
            modules = list(dict.fromkeys(w.parameters[n].module for n in left))
            how = (f"of the same shapes as {shown(same, 6)}" if len(same) == len(left) else
                   f"shapes {shown([str(s) for s in shapes], 6)}")
            found.append(
                f"the optimizer holds {len(foreign)} tensor(s) that are not parameters of the "
                f"model ({how}) and no optimizer{' that stepped' if stepped else ''} holds "
                f"{shown(left, 6)}: module {shown([repr(m) for m in modules], 3)} was replaced "
                f"after the optimizer was built, so the optimizer updates the old module's "
                f"tensors and the new module never moves; build the optimizer after replacing "
                f"it (or add the new parameters to it)")
            left = unapplied = []
        else:
            found.append(
                f"the optimizer holds {len(foreign)} tensor(s) that require grad and are not "
                f"parameters of the model (shapes {shown([str(s) for s in shapes], 3)}): a "
                f"module replaced after the optimizer was built, or tensors outside the model")
    if unapplied:
        found.append(
            f"{len(unapplied)} parameter(s) of the model got a gradient in this step but no "
            f"optimizer whose step ran holds them: {shown(unapplied, 6)} (observed: their "
            f"gradients arrived; the optimizer steps held other tensors), so their .grad is "
            f"computed and never applied; add them to the optimizer, or freeze them with "
            f"requires_grad_(False) if that is meant")
        left = [n for n in left if n not in unapplied]
    moved = list(w.grads.frozen_moved.values())
    if moved:
        m = moved[0]
        found.append(
            f"{len(moved)} frozen parameter(s) (requires_grad=False) still moved at the "
            f"optimizer step: {shown([x.name for x in moved], 3)} (observed: the parameter "
            f"before and after {m.optimizer}.step()); .grad was a tensor, not None, so the "
            f"step still applied {m.why}; set .grad = None when freezing (zero_grad() with "
            f"set_to_none=True), or leave them out of the optimizer")
    masked = list(w.grads.mask_moved.values())
    if masked:
        k = masked[0]
        found.append(
            f"a hook on {k.name} set {k.masked} entries of its gradient to zero (observed: "
            f"nonzero before the hook, zero after it) and {k.optimizer}.step() still moved "
            f"{k.moved} of them (observed: those entries before and after the step): the "
            f"step applies {k.why}, which moves an entry whose gradient is zero, so masking "
            f"the gradient does not freeze the entries (pruned weights come back); apply the "
            f"mask to the weight after each step (torch.nn.utils.prune does), or reset the "
            f"optimizer's state for them"
            + (f"; also {shown([x.name for x in masked[1:]], 3)}" if len(masked) > 1 else ""))
    twice = stepped_twice(w)
    if twice is not None:
        names, kinds, steps, passes = twice
        times = "twice" if steps == 2 else f"{steps} times"
        found.append(
            f"{len(names)} parameter(s) are held by {len(kinds)} optimizers ({', '.join(kinds)}) "
            f"whose steps read the same .grad, with no backward in between: {shown(names, 6)} "
            f"(observed: {steps} optimizer steps holding them after their last backward "
            f"pass), so each was updated {times} in this step, each time with .grad holding "
            f"the gradient of every loss accumulated into it ({passes} backward pass(es)); "
            f"give each parameter to one optimizer, or run each optimizer's step right after "
            f"the backward of its own loss, with zero_grad() in between")
    if left:
        note = (f"{len(left)} parameter(s) of the model that require grad are held by no "
                f"optimizer whose step ran: {shown(left, 3)}; " + (
                    "they got no gradient in this step either" if all(
                        w.parameters[n].grad is None for n in left) else
                    "they get .grad but are not updated (a freeze by optimizer subset, or "
                    "forgotten)"))
    return Finding("what the optimizer holds", True, "; ".join(found) or None, note=note)


def stepped_twice(w: GradWatch) -> tuple[list[str], list[str], int, int] | None:
    """The parameters whose ``.grad`` the steps of several optimizers read with no backward
    pass in between (observed: the step notes of each parameter, by optimizer), the
    optimizers' class names, how many steps read it and how many passes that ``.grad``
    summed; ``None``: none.  The latest such run of steps per parameter; a step that found
    ``.grad`` None or zero (a ``zero_grad`` between them) read nothing of it."""
    names: list[str] = []
    seen: dict[int, None] = {}  # the optimizers, in order
    steps = passes = 0
    kinds = {id(h.optimizer): type(h.optimizer).__name__ for h in w.grads.optimizers}
    for r in w.parameters.values():
        run: list[int] = []  # the optimizers whose steps read .grad since the last pass
        found: list[int] = []
        for n in (*r.events, None):
            if n is None or n.kind == "pass":
                if len(set(run)) > 1:
                    found = run
                run = []
            elif n.kind == "step" and n.held is not None and n.held != 0.0:
                run.append(n.by)
        if found:
            names.append(r.name)
            seen.update(dict.fromkeys(found))
            steps, passes = max(steps, len(found)), max(passes, r.passes)
    if not names:
        return None
    return names, [kinds.get(b, "optimizer") for b in seen], steps, passes


def scaler_skipped(w: GradWatch, o: Options) -> Finding:
    """``GradScaler.step`` calls that skipped the optimizer's step (observed: the scaler's
    step ran, the optimizer's did not): the unscaled ``.grad`` held inf/NaN.  Every one in the
    block skipped: a problem (the model never updates); some: a note (the scale calibrating)."""
    seen = w.grads.scaler_steps
    skipped = [s for ran, s in seen if not ran]
    if not skipped:
        return Finding("GradScaler steps", True)
    text = (f"GradScaler skipped the optimizer step {len(skipped)} of {len(seen)} time(s) in "
            f"this with block (observed: scaler.step ran, optimizer.step did not): the "
            f"unscaled .grad held inf/NaN; the scale was {skipped[-1]:g} at the last one")
    if len(skipped) < len(seen):
        return Finding("GradScaler steps", True, note=text + " (the scale calibrating: "
                                                             "some steps ran)")
    return Finding("GradScaler steps", True,
                   text + "; no update ran, so the parameters did not move: if this persists "
                          "as the scale falls, the inf/NaN comes from the model or the data, "
                          "not from the scale")


def optimizer_read(w: GradWatch, o: Options) -> Finding:
    """What each optimizer step read, for the parameters it holds that got a gradient in this
    step: ``.grad`` None (the step skipped them), all zero while the pass was not, or holding
    NaN/Inf (the norm of ``.grad`` read by the step pre-hook)."""
    unsynced = ddp_unsynced(w)
    if not w.grads.steps_seen:
        return Finding("what the optimizer read", False, why_not="no optimizer step was seen",
                       note="" if unsynced is None else _unsynced_text(w, *unsynced))
    none, zero, bad = [], [], []
    for r in w.parameters.values():
        if not r.requires_grad or r.grad is None:
            continue  # no gradient this step: named by the missing-gradient finding
        last = max((i for i, n in enumerate(r.events) if n.kind == "pass"), default=-1)
        for n in r.events[last + 1:]:
            if n.kind != "step":
                continue
            if n.held is None:
                none.append(r.name)
            elif n.measured and not math.isfinite(n.held):
                bad.append(r.name)
            elif n.measured and n.held == 0.0 and r.grad:
                zero.append(r.name)
            break  # the first step after the last pass: what it read of this pass
    early = stepped_before_backward(w)
    if early:
        return Finding("what the optimizer read", True, early)
    found = []
    if none:
        found.append(f"the optimizer step found .grad None for {len(none)} parameter(s) that "
                     f"got a gradient in this step ({shown(none, 3)}) and skipped them")
    if zero:
        found.append(f"the optimizer step read an all-zero .grad for {len(zero)} parameter(s) "
                     f"whose gradient was not zero ({shown(zero, 3)})")
    if bad:
        text = (f"an optimizer step read a .grad holding NaN/Inf for {len(bad)} "
                f"parameter(s): {shown(bad, 3)}")
        if w.engine == "DDP" and w.world > 1:
            own = all(w.parameters[n].state == "ok" for n in bad)
            text += (f" (under DDP, .grad is the average over the {w.world} processes"
                     + ("; this process's own gradient was finite, so another process sent "
                        "the NaN/Inf: look at the other processes' batches"
                        if own else "") + _first_rank(w) + ")")
        found.append(text)
    if unsynced is not None:
        found.append(_unsynced_text(w, *unsynced))
    if not found:
        return Finding("what the optimizer read", True)
    return Finding("what the optimizer read", True,
                   "; ".join(found) + " (observed: .grad at the step)")


def stepped_before_backward(w: GradWatch) -> str:
    """Every optimizer step of the block found ``.grad`` None or all zero for every parameter
    it holds that got a gradient in the block, and each of those got its last one after a step:
    the steps ran before the backward passes of their iterations and moved none of them
    (observed: ``.grad`` at each step, the order of steps and passes).  ``""`` otherwise."""
    names, steps, zeros = [], 0, False
    for r in w.parameters.values():
        if not r.requires_grad or r.grad is None:
            continue
        kinds = [n for n in r.events if n.kind in ("step", "pass")]
        at_steps = [n for n in kinds if n.kind == "step"]
        if not at_steps:
            continue
        if any(n.held is not None and not (n.measured and n.held == 0.0) for n in at_steps) \
                or kinds[-1].kind != "pass":
            return ""  # a step read a gradient (or was not read), or a step read the last pass
        names.append(r.name)
        steps = max(steps, len(at_steps))
        zeros = zeros or any(n.held is not None for n in at_steps)
    if not names:
        return ""
    found = ("found .grad None or all zero (zero_grad) for every parameter that got a gradient"
             if zeros else "found .grad None for every parameter that got a gradient")
    then = ("so it stepped on no gradient of this block" if zeros else
            "so it skipped every one of them (torch's optimizers skip a parameter whose .grad "
            "is None) and moved none")
    return (f"each of the {steps} optimizer step(s) ran before the backward pass of its "
            f"iteration: it {found} ({len(names)}: {shown(names, 3)}), {then}, and the last "
            f"backward pass came after it (observed: .grad at each step, then the pass); call "
            f"loss.backward() before optimizer.step()")


def _unsynced_text(w: GradWatch, names: list[str], when: str) -> str:
    """What a read of ``.grad`` after a backward DDP did not synchronise means."""
    where = ("the optimizer step" if when == "step" else "the end of the with block")
    text = (f"under DDP the backward before {where} did not synchronise the gradients of "
            f"{len(names)} parameter(s) ({shown(names, 3)}): its forward ran inside no_sync() "
            f"(observed: DistributedDataParallel.require_backward_grad_sync was False at that "
            f"forward), so .grad was not averaged over the {w.world} processes")
    if when == "step":
        return text + (": each process stepped on its own gradient, and the replicas "
                       "diverge; run the forward and backward of the last micro-batch before "
                       "the step outside no_sync()")
    return text + (" (it holds this process's own gradient): the backward before the "
                   "optimizer step must run outside no_sync()")


def _first_rank(w: GradWatch) -> str:
    """``"; process 1 saw it first: ..."``: which process's own gradient held NaN/Inf first,
    from the records every process sent when the block ended (``w.ranks``); ``""`` when
    they were not gathered or no process's own gradient was non-finite."""
    if not w.ranks:
        return ""
    first = first_nonfinite(w.ranks)
    if first is None:
        return ("; no process's own gradient held NaN/Inf (gathered from every process when "
                "the block ended): the average itself overflowed")
    who = "this process" if first.rank == w.rank else "process"
    others = [s.rank for s in w.ranks if s.nonfinite and s.rank != first.rank]
    also = (f" (then process(es) {', '.join(map(str, others))})" if others else
            "; every other process's own gradient was finite")
    return (f"; {who} {first.rank} saw it first: its own gradient of "
            f"{shown(first.nonfinite, 3)} held NaN/Inf before the processes averaged it{also} "
            f"(gathered from every process when the block ended)")


def step_unmoved(w: GradWatch, o: Options) -> Finding:
    """An optimizer step that left parameters unchanged although their ``.grad`` was finite
    and not negligible (observed: :mod:`.stepmoves` reads a sample of each before and after
    the step): the update rounded away.  Said where the cause shows: ``bfloat16`` /
    ``float16`` weights, or a step that changed none of the parameters it read (its learning
    rate; one a scheduler decayed is named), a learning rate of exactly 0 too (a warm-up's
    first step: said, since the step did nothing, not "ok"); float32 weights of one layer
    left as they were among others that moved are a small gradient there, not the step's
    doing, and are not named here."""
    unmoved = list(w.grads.unmoved.values())
    if not unmoved:
        return Finding("optimizer step applied", True)
    if all(x.lr == 0.0 for x in unmoved):
        return Finding("optimizer step applied", True, (
            f"the optimizer step ({unmoved[0].optimizer}) did not move any parameter it read: "
            f"its learning rate is 0 at this step, so the weights are unchanged (observed: "
            f"a sample of each before and after the step); {zero_lr_cause(w.grads.schedules)}"))
    unmoved = [x for x in unmoved if x.lr != 0.0]
    low = [x for x in unmoved if x.dtype in (torch.bfloat16, torch.float16)]
    whole = any(stuck and stuck == read for stuck, read in w.grads.step_moves.values())
    if not low and not whole:
        return Finding("optimizer step applied", True)
    u = (low or unmoved)[0]
    names = [x.name for x in (low or unmoved)]
    lr = "not read" if u.lr is None else f"{u.lr:g}"
    text = (f"the optimizer step left {len(names)} parameter(s) unchanged although their "
            f".grad was finite and not negligible: {shown(names, 3)} (observed: {u.same} of {u.read} "
            f"entries of {u.name} sampled where .grad is not negligible are bit for bit the "
            f"same after {u.optimizer}.step())")
    if low:
        kind = str(u.dtype).removeprefix("torch.")
        text += (f", so the update was rounded away: the weights are {kind}, and an update "
                 f"smaller than half the spacing between neighbouring {kind} numbers near the "
                 f"weight rounds back to the same weight (learning rate {lr}); keep the "
                 f"weights in float32 and run the forward under torch.autocast, or raise the "
                 f"learning rate")
    else:  # every parameter read: what the update was made of, both factors shown
        kind = str(u.dtype).removeprefix("torch.")
        text += (f": the update (learning rate {lr} times .grad, whose largest entry read "
                 f"there is {u.largest:.2g}) is below the spacing of the {kind} numbers near "
                 f"the weights, so it was rounded away")
        if u.initial_lr is not None and u.lr is not None and u.lr < u.initial_lr:
            text += (f"; the learning rate is down from {u.initial_lr:g} (initial_lr, set by "
                     f"a learning-rate scheduler): check how often the scheduler's step() "
                     f"runs (per epoch, or per batch)")
    return Finding("optimizer step applied", True, text)


def checked(w: GradWatch) -> tuple[str, str, str]:
    """``(claim, scope, short)`` for a step in which no finding found a problem: the claim
    ("ok" only when something was checked, else ``""``), what was checked or what could not
    be (``scope``), and a short form of what could not be, for the line without its list of
    checks (``""`` when what an optimizer reads was checked)."""
    trainable = [r for r in w.parameters.values() if r.requires_grad]
    if not w.parameters:
        return "", "nothing to check: the model has no parameters", ""
    if not trainable:
        return "", "nothing to check: every parameter of the model is frozen", ""
    steps = w.grads.steps_seen
    if steps:
        held = {p for h in w.grads.optimizers for p in h.held if p.requires_grad}
        return "ok", (f"checked: the .grad of the {len(held)} parameter(s) the optimizer "
                      f"holds, read at {steps} optimizer step(s): present, finite, nonzero "
                      f"and what the observed backward passes left (each present; the "
                      f"smallest one's norm compared with its pass, all of them read when "
                      f"it differed), and {SAMPLE} sampled entries of each, where .grad is "
                      f"not negligible, read before and after each step: a step that changed "
                      f"none of them, or bfloat16/float16 weights it left unchanged, would "
                      f"be reported"), ""
    if w.grads.scaler_steps:
        return "", ("nothing an optimizer read: every GradScaler.step skipped the optimizer "
                    "step"), ""
    if any(r.final_known for r in trainable):
        return "ok", ("checked: .grad of every parameter at the end of the with block; no "
                      "optimizer step was seen, so what an optimizer holds and reads was "
                      "not checked"), " (no optimizer step seen)"
    return "ok", ("checked: the gradients the backward passes computed; the with block has "
                  "not ended and no optimizer step was seen, so .grad as an optimizer will "
                  "read it was not checked"), " (no optimizer step seen)"
