"""What the optimizers hold against the model's parameters, checked at the end of the block:
tensors an optimizer steps that are not parameters of the model (a module replaced after the
optimizer was built; float32 master copies, :mod:`.masters`; tensors outside the model that
get a gradient, such as a criterion's own parameters), parameters of the model no optimizer
that stepped holds, frozen parameters an optimizer built from a selection holds (never moved),
frozen parameters a step still moved, masked gradient entries a step
moved, and parameters stepped twice on one gradient (:func:`optimizer_holds`).

Imports :mod:`.finding` and :mod:`.masters` only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch

from .finding import Finding, Options, shown
from .masters import master_copies

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = ["frozen_held", "gone", "optimizer_holds", "outside", "stepped_twice"]


def gone(w: GradWatch) -> list[str]:
    """Parameters the watch began with that the model no longer holds (read now): their
    module was replaced, or the attribute re-assigned, while the watch ran."""
    now = {id(p) for p in w.model.parameters()}
    return [name for p, (name, _) in w.watched.owner.items() if id(p) not in now]


def _by_hand(w: GradWatch, unapplied: list[str]) -> tuple[str, list[str]]:
    """Parameters that got a gradient, that no optimizer whose step ran holds, and that were
    modified in place after the forward used them (their version counter went up since:
    an update written by hand, which the watch does not see as a step), in words, and their
    names; ``""`` when none of ``unapplied`` was.  States how many entries hold NaN/Inf now.
    An edit through ``.data`` leaves the version counter as it was: not seen."""
    by_name = {name: p for p, (name, _) in w.watched.owner.items()}
    ps = [by_name[n] for n in unapplied if n in by_name]
    edited = {id(p) for p in w.calls.noted.changed_since_forward(ps)}
    names = [n for n in unapplied if n in by_name and id(by_name[n]) in edited]
    if not names:
        return "", []
    text = (f"{len(names)} parameter(s) of the model got a gradient and were then modified in "
            f"place, updated outside any torch.optim optimizer: {shown(names, 6)} (observed: "
            f"their gradients arrived, no torch.optim optimizer whose step ran holds them, and "
            f"their version counters went up after the forward used them): a hand-written "
            f"update, whose step the watch does not see, so what it applied is not checked")
    bad = [(n, int((~torch.isfinite(by_name[n].detach())).sum()), by_name[n].numel())
           for n in names if by_name[n].is_floating_point()]
    bad = [b for b in bad if b[1]]
    if bad:
        n, k, total = bad[0]
        text += (f"; that update wrote NaN/Inf into {len(bad)} of them ({n}: {k} of {total} "
                 f"entries now, read at the block's end): check its arithmetic (an iteration "
                 f"that diverges, a division by a norm near 0) before the next step")
    return text, names


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
            found, note = outside(w, [*opts, *strays], found)
    by_hand, hand_names = _by_hand(w, unapplied)
    if by_hand:
        found.append(by_hand)
        left = [n for n in left if n not in hand_names]
        unapplied = [n for n in unapplied if n not in hand_names]
    if unapplied:
        found.append(
            f"{len(unapplied)} parameter(s) of the model got a gradient in this step but no "
            f"optimizer whose step ran holds them: {shown(unapplied, 6)} (observed: their "
            f"gradients arrived; the optimizer steps held other tensors), so their .grad is "
            f"computed and never applied; add them to the optimizer, or freeze them with "
            f"requires_grad_(False) if that is meant")
        left = [n for n in left if n not in unapplied]
    if stepped and (idle := frozen_held(w, held)):
        found.append(
            f"{len(idle)} parameter(s) the optimizer holds are frozen (requires_grad=False): "
            f"{shown(idle, 6)} (observed: held by an optimizer whose step ran, which was built "
            f"from a selection of the model's parameters; requires_grad=False and .grad None "
            f"at the block's end), so backward gives them no gradient and the step never moves "
            f"them; if a module's requires_grad_(False) froze them, it reached every parameter "
            f"the module held at that moment, layers attached to it before included: freeze "
            f"first, then attach the layers to train (or set requires_grad_(True) on them "
            f"after the freeze)")
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


def frozen_held(w: GradWatch, held: set[Any]) -> list[str]:
    """Frozen parameters (``requires_grad=False`` when the watch began and now, ``.grad``
    None) in ``held``, the parameters held by the optimizers whose step ran, when those do not
    hold every parameter of the model (an optimizer built from a selection: a freeze by
    ``requires_grad`` in an optimizer over all of them is the usual way to freeze)."""
    owner = w.watched.owner
    if all(p in held for p in owner):
        return []
    return [name for p, (name, _) in owner.items()
            if p in held and name in w.parameters and not p.requires_grad
            and not w.parameters[name].requires_grad and p.grad is None]


def outside(w: GradWatch, holdings: list[Any], found: list[str]) -> tuple[list[str], str]:
    """The optimizers' tensors outside the model, no parameter of the model left without an
    optimizer: a note when each had a ``.grad`` at one of the steps (observed: a criterion's
    own parameters, proxies or a learned temperature), with ``found``; a problem added to
    ``found`` for those that had none (a module replaced after the optimizer was built)."""
    stale = [f for h in holdings for f in h.foreign if id(f) not in h.fed]
    every = [f for h in holdings for f in h.foreign]
    shapes = shown([str(tuple(f.shape)) for f in (stale or every)], 3)
    if not stale:
        return found, (
            f"the optimizer also steps {len(every)} tensor(s) that are not parameters of the "
            f"model (shapes {shapes}): each had a .grad at the step (observed), so the loss "
            f"trains them (a criterion's own parameters: proxies, centres, a temperature); "
            f"model.state_dict() does not save them")
    when = "at any step" if w.grads.steps_seen else "(no step seen)"
    return [*found, (
        f"the optimizer holds {len(stale)} tensor(s) that require grad and are not parameters "
        f"of the model and had no .grad {when} (shapes {shapes}): a module replaced after the "
        f"optimizer was built, or tensors outside the model the loss does not use; they are "
        f"never updated")], ""


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
