"""What the optimizer will read, checked: the findings behind a summary's "ok".

"ok" is a claim about the ``.grad`` an optimizer reads, so it is checked where it is read: at
each optimizer step (a step pre-hook reads the norm of every ``.grad`` the step holds) and at
the end of the ``with`` block (what the optimizers hold: :mod:`.holds`).  The findings here
report what stands between the record and that claim: the exception that ended the block (:func:`block_ended`), tensors that require grad
and feed the forward without being registered parameters (:func:`not_registered`), and
non-finite ``.grad`` read by a step (:func:`optimizer_read`).  :func:`checked` says, for the
"ok" line, what was checked, or why nothing could be.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import torch

from .finding import Finding, Options, shown
from .ranks import first_nonfinite
from .scales import ddp_unsynced
from .schedules import zero_lr_cause
from .stepmoves import SAMPLE

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = [
    "block_ended",
    "checked",
    "not_registered",
    "optimizer_read",
    "scaler_skipped",
    "step_unmoved",
    "step_uphill",
]



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
    every = w.graph.unregistered()
    found = [u for u in every if not u.made_in_forward]
    made = [u for u in every if u.made_in_forward]
    made_note = "" if not made else (
        f"{shown([f'{u.where} (shape {tuple(u.shape)})' for u in made], 3)} "
        f"{'is a leaf that requires' if len(made) == 1 else 'are leaves that require'} grad, "
        f"made so inside the forward (a forward hook or requires_grad_() on a module's output: transformers' "
        f"enable_input_require_grads does this for gradient checkpointing): an activation, "
        f"not a parameter; it gets a .grad each step that no optimizer reads")
    if not found:
        return Finding("unregistered tensors", w.watched.backward_seen or not w.watched.active,
                       note=made_note)
    named = [f"{u.where or 'a tensor'} (shape {tuple(u.shape)})" for u in found]
    lost = [u for u in found if not u.optimized]
    if all(u.later for u in found):
        what = (f"{len(found)} tensor(s) that require grad feed the model's forward but were "
                f"not parameters of the model when the watch began: {shown(named, 3)}")
    else:
        what = (f"{len(found)} tensor(s) that require grad feed the model's forward but are "
                f"not registered parameters of the model: {shown(named, 3)}; "
                f"model.parameters() does not list them")
    also = f"; {made_note}" if made_note else ""
    if not lost:
        return Finding("unregistered tensors", True, note=(
            what + ", though an optimizer that stepped holds them (state_dict() does not "
                   "save them)" + also))
    who = ("no optimizer that stepped holds them" if w.grads.steps_seen else
           "no optimizer seen holds them" if w.grads.seen_optimizers else
           "an optimizer built from model.parameters() never holds them")
    return Finding("unregistered tensors", True,
                   f"{what}, so {who}: they get .grad but are never updated (observed: "
                   f"reached from the model's output in the graph){also}")


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
        passed = r.events[last].grad if last >= 0 else None  # the pass the step read
        passed = r.grad if passed is None else passed
        for n in r.events[last + 1:]:
            if n.kind != "step":
                continue
            if n.held is None:
                none.append(r.name)
            elif n.measured and not math.isfinite(n.held):
                bad.append(r.name)
            elif n.measured and n.held == 0.0 and passed:
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


UPHILL = 0.1  # share of a first step's sampled entries moved along .grad that is named


def step_uphill(w: GradWatch, o: Options) -> Finding:
    """A first optimizer step (no momentum held) that moved entries along the gradient it
    read, not against it (observed: :mod:`.stepmoves` samples each parameter before and
    after the step): a descent step from no history moves every entry against ``.grad``
    (plus its L2 weight decay), so a share of at least :data:`UPHILL` moved along it, with
    the move's first-order change of the loss (the sum of move times gradient over the
    sample) positive, is an update whose sign is flipped there.  A step that mixes entries
    (Muon orthogonalises the update matrix) can move some entries along their gradient while
    it descends as a whole: not named."""
    del o
    up = [u for u in w.grads.moves.uphill.values()
          if u.along >= max(2, UPHILL * u.read) and u.first_order > 0]
    if not up:
        return Finding("optimizer step direction", True)
    u = up[0]
    return Finding("optimizer step direction", True, (
        f"the optimizer step ({u.optimizer}) moved {u.along} of {u.read} sampled entries "
        f"along the gradient it read, uphill (to first order the loss grows there: "
        f"{shown(list(u.names), 3)}), at a step with no momentum to explain it, and to "
        f"first order the step as a whole raises the loss (observed: a sample of each "
        f"parameter before and after the step: the sum of move times gradient over it is "
        f"{u.first_order:+.2g}, against {-u.descent:.2g} had every entry moved the same "
        f"amount against its gradient); a descent step moves against "
        f".grad (SGD, Adam, RMSprop do), so its update's sign is flipped there: a "
        f"preconditioner or curvature estimate that is negative where it lacks its floor "
        f"(max(h, eps) or a clamp), or a sign error in a custom optimizer"))


def step_unmoved(w: GradWatch, o: Options) -> Finding:
    """An optimizer step that left parameters unchanged although their ``.grad`` was finite
    and not negligible (observed: :mod:`.stepmoves` reads a sample of each before and after
    the step): the update rounded away.  Said where the cause shows: ``bfloat16`` /
    ``float16`` weights, or a step that changed none of the parameters it read (its learning
    rate; one a scheduler decayed is named), a learning rate of exactly 0 too (a warm-up's
    first step: said, since the step did nothing, not "ok"); float32 weights of one layer
    left as they were among others that moved are a small gradient there, not the step's
    doing, and are not named here, unless they are most of those the step read, or hold
    most of the entries sampled (then the step did not train the model, whatever the
    cause)."""
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
    most = any(stuck and (stuck * 2 > read or same * 2 > entries)
               for stuck, read, same, entries in w.grads.step_moves.values())
    if not low and not most:
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
    else:  # most parameters read: what the update was made of, both factors shown
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
                      f"norms of the smallest and of the largest compared with their "
                      f"passes, all of them read when one differed), and {SAMPLE} sampled "
                      f"entries of each, where .grad is "
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
