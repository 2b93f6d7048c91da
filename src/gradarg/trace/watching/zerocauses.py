"""Why a parameter's gradient is exactly zero, as far as the watch observed it: a product with
an all-zero factor (:func:`all_zero`, read from the graph), a float16 gradient that underflowed
under autocast with no loss scaling (:func:`float16_underflow`, read from the dtypes of the
module outputs it crossed), a hook of the user's on the parameter that replaced it
(:func:`hooks`, read before and after those hooks: :func:`hook_change`); and what an
optimizer step still did to a parameter whose ``.grad`` a hook zeroed.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import torch

from ..graph.values import fmt_norm as _f
from . import clampedparams, zeroops
from .finding import Finding, Options, shown
from .magnitudes import gate_text, saturated_text

if TYPE_CHECKING:
    from .records import ModuleRecord, ParamRecord
    from .watch import GradWatch

__all__ = ["all_zero", "cancelled", "float16_underflow", "hook_change", "hook_moved_text", "hooks", "loss_made",
           "padding_text",
           "scaled_step", "tensor_hooks"]


def _of_module(w: GradWatch, params: list[str]) -> str:
    """Parameters by name, each with the module that holds it."""
    return ", ".join(f"{n} (of module '{w.parameters[n].module}')" if n in w.parameters else n
                     for n in params)



def all_zero(w: GradWatch, o: Options) -> Finding:
    """Parameters whose gradient is exactly zero.  Where every path to one passes through a
    product with an all-zero parameter (read from the graph and the values at the backward),
    the factor is named; a zero-initialised factor of a product of parameters that gets a
    nonzero gradient itself (LoRA's ``B`` at the first step: ``A`` behind it) is a note, not a
    problem: it lasts until the factor moves."""
    zero = [n for n, r in w.parameters.items() if r.state == "zero"]
    if not zero:
        return Finding("all-zero", True)
    blocked = w.graph.zero_blocked
    by_hook = {n for n in zero if hook_change(w.parameters[n]) is not None}  # see hooks()
    explained = [n for n in zero if n in blocked and n not in by_hook]
    rest = [n for n in zero if n not in blocked and n not in by_hook]
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
                     f"the gradients of {shown(explained, 2)} are")
            return Finding("all-zero", True, note=(
                f"{whose} exactly zero, as expected: {why}; {fshown} {gets} a nonzero "
                f"gradient, so the next optimizer step moves {it}, and a gradient reaches "
                f"{shown(explained, 2)} from then on (a factor initialised to zero, as LoRA's "
                f"B, does this at the first step)"), expected=tuple(explained))
        if moving:
            then = (f"{fshown} {gets} a nonzero gradient, so a gradient reaches "
                    f"{'it' if len(explained) == 1 else 'them'} once an optimizer step moves "
                    f"{it} (if {it} {'is' if one else 'are'} initialised to zero on purpose, "
                    f"as a ReZero gate, this lasts one step)")
        else:
            then = (f"{fshown} {gets} an exactly zero gradient too, so nothing moves, now "
                    f"or at any later step: all-zero factors of a product are a fixed point of "
                    f"gradient descent; initialise one of the factors nonzero")
        parts.append(f"all-zero gradient for {len(explained)} parameter(s): "
                     f"{shown(explained, 2)}: {why}; {then}")
    if rest:
        first_zero = w.first_zero()
        where = (f" (the gradient first became all zero at '{first_zero.name}' "
                 f"({first_zero.kind}))" if first_zero else "")
        made = w.zero_made
        if made is not None and made.outer == zeroops.LOSS:
            where = loss_made(w)
        elif made is None and not first_zero and w.grads.losses.zero_why:
            # no module output on the way with a recorded gradient (a Distribution returned)
            where = (f" (observed in the loss's first operations at the backward() call: "
                     f"{w.grads.losses.zero_why})")
        elif made is not None and not first_zero:  # made by operations outside any module
            outer = "the model" if made.outer == "(model)" else f"'{made.outer}'"
            where = (f" (observed: the gradient was nonzero at the output of {outer} and all "
                     f"zero at the output of '{made.inner}' inside it; between them, the "
                     f"operations of {outer}'s own forward made it zero: "
                     f"{made.why or zeroops.describe(made.ops)})")
        padded = padding_text(w, rest) or clampedparams.said(w, rest)
        if padded:
            where = padded
        elif not where:
            where = cancelled(w, rest)
        hooked = [at for at, _, after in tensor_hooks(w) if after == 0.0]
        if hooked:  # the module after the hooked tensor only received the hook's zeros
            where = (f" (a hook on a tensor of the forward, registered {hooked[0]}, replaced "
                     f"the gradient arriving there with zeros)")
        parts.append(f"all-zero gradient for {len(rest)} parameter(s): {shown(rest, 2)}{where}"
                     f"{saturated_text(w, -1, len(w.modules))}{float16_underflow(w)}"
                     f"{gate_text(w, zero=True)}")
    return Finding("all-zero", True, "; ".join(parts) or None)


# modules whose bias gradient is the gradient arriving at their output summed over every
# dimension but the features' (or channels'): torch's formulas for these layers
_SUMMED_BIAS = frozenset({"Linear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d",
                          "ConvTranspose2d", "ConvTranspose3d", "LayerNorm", "GroupNorm",
                          "BatchNorm1d", "BatchNorm2d", "BatchNorm3d"})


def cancelled(w: GradWatch, names: list[str]) -> str:
    """``" (observed: ...)"`` for the first of ``names`` that is the ``bias`` of a layer whose
    bias gradient is a sum (:data:`_SUMMED_BIAS`) while the gradient arriving at its output
    was nonzero at every call: the terms of that sum cancelled exactly (a loss whose
    per-example gradients are clamped to ±1, L1 or smooth L1 past its ``beta``, with as many
    examples on each side); ``""`` when there is none."""
    for n in names:
        r = w.parameters.get(n)
        if r is None or not n.endswith("bias"):
            continue
        calls = [c for c in w.modules if c.name == r.module]
        if not calls or calls[0].kind not in _SUMMED_BIAS or not all(
                c.grad_out is not None and c.grad_out > 0 for c in calls):
            continue
        c = calls[0]
        return (f" (observed: the gradient arriving at module '{c.name}' ({c.kind}) was "
                f"nonzero (norm {_f(c.grad_out)}), and {n}'s gradient is that gradient summed "
                f"over the examples (and positions): its terms cancel exactly in this batch "
                f"(per-example gradients clamped to ±1 by an L1 or smooth L1 loss past its "
                f"beta do, with as many examples on each side); the gradient reaching the "
                f"layer is not zero)")
    return ""


def padding_text(w: GradWatch, names: list[str]) -> str:
    """``" (observed: ...)"``: those of ``names`` held by an ``nn.Embedding`` every call of
    which in this step took indices that are all its ``padding_idx`` (the padding row gets
    no gradient, by design); ``""`` when there is none."""
    padding = w.calls.noted.padding_only
    for n in names:
        module = w.parameters[n].module if n in w.parameters else None
        calls = [c for c in w.modules if c.name == module]
        if calls and all(c.index in padding for c in calls):
            c = calls[0]
            return (f" (observed: every call of module '{c.name}' ({c.kind}) in this step took "
                    f"indices that are all its padding_idx ({padding[c.index]}); the padding "
                    f"row gets no gradient by design, so a batch of padding only sends nothing "
                    f"to {n} and the optimizer step has nothing to apply)")
    return ""


def loss_made(w: GradWatch) -> str:
    """``" (observed: ...)"``: the gradient was already all zero at the model's outputs (the
    norms the module hooks recorded), so the loss made it zero after the model: what the
    saved values of its nodes show, its operations, whether its value was finite (observed
    at the ``backward()`` call); ``""`` when the zero was not made there, or when the model's
    output was float16 and nothing the loss saved shows a zero (:func:`float16_underflow`
    says it)."""
    made = w.zero_made
    if made is None or made.outer != zeroops.LOSS:
        return ""
    if not made.why and float16_underflow(w):  # a float16 output: its cast may have rounded
        return ""
    text = (" (observed: the gradient arriving at the model's output was already all zero, "
            "so it was made zero after the model, by the loss")
    if made.why:
        text += f": {made.why}"
    if made.ops:
        text += f"; the operations between the model's output and the loss: {zeroops.describe(made.ops)}"
    finite = w.grads.losses.finite
    if finite is False:
        text += (f"; the loss passed to backward() was {w.grads.losses.nonfinite} (observed at "
                 f"the call)")
    return text + ")"


def hook_change(r: ParamRecord) -> tuple[float, float] | None:
    """``(before, after)``: the norms of the gradient backward computed for parameter ``r``
    in its last pass of this step and of what reached ``.grad`` after the hooks of the
    user's on it (``Tensor.register_hook``), when they differ; ``None`` when they agree, or
    it has no such hook, or no pass this step."""
    if r.grad is None:
        return None
    last = next((n for n in reversed(r.events) if n.kind == "pass"), None)
    if last is None or last.raw is None or last.grad is None:
        return None
    raw, got = last.raw, last.grad
    return (raw, got) if _changed(raw, got) else None


def hook_moved_text(w: GradWatch, names: list[str]) -> str:
    """``"; the optimizer step still moved ..."``: those of ``names`` (a hook zeroed their
    gradient) that an optimizer step changed all the same (observed), and why; else ``""``."""
    moved = [n for n in names if n in w.grads.hook_moved]
    if not moved:
        return ""
    m = w.grads.hook_moved[moved[0]]
    them = ("it" if len(names) == 1 else "them" if len(moved) == len(names) else
            f"{len(moved)} of them ({shown(moved, 2)})")
    return (f"; the optimizer step still moved {them}: {m.optimizer}.step() applied {m.why} "
            f"with the zero gradient (observed: the parameter before and after the step), so "
            f"a hook that zeroes the gradient does not freeze a parameter: leave it out of the "
            f"optimizer (or set requires_grad_(False) and .grad = None)")


def _changed(raw: float, got: float) -> bool:
    if raw == got or (math.isnan(raw) and math.isnan(got)):
        return False
    return not (math.isfinite(raw) and math.isfinite(got)
                and abs(got - raw) <= 1e-5 * max(raw, got))


def _ratio(raw: float, got: float) -> str:
    return f" (x {got / raw:.3g})" if raw and math.isfinite(got / raw) else ""


def tensor_hooks(w: GradWatch) -> list[tuple[str, float, float]]:
    """``(where, before, after)`` for each tensor of this step's graph (not a parameter) on
    which a hook of the user's changed the gradient arriving there (observed: its norm
    before and after the hooks on it); ``where`` in words."""
    out = []
    for h in w.grads.tensor_hooks:
        if h.before and h.after and _changed(h.before[-1], h.after[-1]):
            where = ("outside the model's forward" if h.where is None else
                     f"during the call of module '{h.where[0]}' ({h.where[1]})")
            out.append((where, h.before[-1], h.after[-1]))
    return out


def hooks(w: GradWatch, o: Options) -> Finding:
    """Hooks of the user's (``Tensor.register_hook``) that changed a gradient: on a
    parameter, before it reached ``.grad``; on a tensor of the forward (an activation,
    registered while the watch ran), before it went on down the graph (observed: its norm
    before and after them).  Replaced by zeros: a problem, with what an optimizer step still
    did to the parameter (weight decay, momentum: observed by its sum before and after the
    step); otherwise a note (a hook that scales or clips the gradient on purpose)."""
    changed = {n: c for n, r in w.parameters.items() if (c := hook_change(r)) is not None}
    tensors = tensor_hooks(w)
    if not changed and not tensors:
        return Finding("gradient hooks", True)
    zeroed = [n for n, (raw, got) in changed.items() if got == 0.0]
    other = [n for n in changed if n not in zeroed]
    found, notes = [], []
    if other:
        raw, got = changed[other[0]]
        notes.append(f"a hook on {shown(other, 3)} (Tensor.register_hook) changed the "
                     f"gradient backward computed before it reached .grad: {other[0]}'s norm "
                     f"{_f(raw)} -> {_f(got)}{_ratio(raw, got)} (observed: before and after "
                     f"the hooks registered on it)")
    if zeroed:
        raw, _ = changed[zeroed[0]]
        found.append(f"all-zero gradient for {len(zeroed)} parameter(s) from a hook: a hook on "
                     f"{shown(zeroed, 3)} (Tensor.register_hook) replaced the gradient "
                     f"backward computed with zeros (observed: {zeroed[0]}'s gradient had norm "
                     f"{_f(raw)} before the hooks registered on it and 0 after them), so .grad "
                     f"is all zero{hook_moved_text(w, zeroed)}")
    for where, before, after in tensors:
        what = (f"a hook on a tensor of the forward (Tensor.register_hook, registered {where}) "
                f"{{}} (observed: the gradient arriving there had norm {_f(before)} before the "
                f"hooks on that tensor and {_f(after)} after them)")
        if after == 0.0:
            found.append(what.format("replaced the gradient arriving there with zeros, so "
                                     "nothing flows back through that tensor") +
                         "; the parameters below it get an all-zero gradient")
        else:
            notes.append(what.format(f"changed the gradient arriving there{_ratio(before, after)}"))
    return Finding("gradient hooks", True, "; ".join(found) or None, note="; ".join(notes))


def scaled_step(w: GradWatch) -> bool:
    """Whether a pass of this step came from a loss a ``GradScaler`` scaled (observed)."""
    for r in w.parameters.values():
        if r.grad is None:
            continue
        last = next((n for n in reversed(r.events) if n.kind == "pass"), None)
        if last is not None and last.scale is not None and last.scale != 1.0:
            return True
    return False


_HALF_NORMAL = 6.1e-5  # float16's smallest normal number (torch.finfo(torch.float16).tiny)


def _subnormal_at(w: GradWatch, half: set[int]) -> ModuleRecord | None:
    """The call holding a parameter whose gradient is all zero, which returned a float16
    tensor and received a nonzero gradient there whose norm is below float16's smallest
    normal number (so every entry was subnormal); ``None`` when there is none."""
    zero = {w.parameters[n].module for n, r in w.parameters.items() if r.state == "zero"}
    for c in w.modules:
        if (c.name in zero and c.index in half and c.grad_out
                and c.grad_out < _HALF_NORMAL):
            return c
    return None


def float16_underflow(w: GradWatch) -> str:
    """``"; possibly a float16 underflow ..."`` when this step's all-zero gradients crossed a
    float16 tensor (observed: the output of a module call, under autocast or a model in
    float16) where they were already all zero, and no ``GradScaler`` scaled the loss: a
    gradient entry below float16's smallest subnormal (about 6e-8) rounds to 0 there.  The
    call is the one that received a nonzero gradient and sent zero (not a ReLU-like one with
    dead units), or, where the gradient arrived all zero from the loss, the model's own
    call, or the call holding an all-zero parameter gradient whose output's gradient was
    nonzero but below float16's smallest normal number (its entries subnormal, a sum of them
    can round to 0).  ``""`` otherwise (no float16 on the path: float32, bfloat16)."""
    if scaled_step(w):
        return ""
    half = {i for i, (_, dtype, _) in w.calls.noted.narrow.items() if dtype == torch.float16}
    if not half:
        return ""
    first = w.first_zero()
    if first is not None:
        if first.index not in half or (first.dead_units and first.dead_units[0]):
            return ""
        where = (f"module '{first.name}' ({first.kind}) returned a float16 tensor and received "
                 f"a nonzero gradient there (norm {_f(first.grad_out)}) but sent an all-zero "
                 f"one")
    else:
        outer = [c for c in w.modules if c.parent is None and c.index not in w.calls.late
                 and c.grad_out == 0.0]
        tiny = _subnormal_at(w, half)
        if outer and outer[0].index in half:
            c = outer[0]
            at = "the model's output" if c.index == 0 else f"the output of '{c.name}'"
            where = (f"the gradient arriving from the loss at {at} ({c.kind}), a float16 "
                     f"tensor, was already all zero")
        elif tiny is not None:
            where = (f"the gradient arriving at module '{tiny.name}' ({tiny.kind}), a float16 "
                     f"tensor, had norm {_f(tiny.grad_out)}, below float16's smallest normal "
                     f"number (about 6.1e-5): its entries were subnormal")
        else:
            return ""
    params = [p for p in w.watched.owner if p.requires_grad]
    if params and all(p.dtype == torch.float16 for p in params):
        fix = ("multiply the loss by a large constant before backward and divide .grad by it "
               "before the step, or keep the parameters in float32 and run the forward under "
               "torch.autocast with torch.amp.GradScaler (it cannot unscale float16 .grad)")
    else:
        fix = ("scale the loss with torch.amp.GradScaler (scaler.scale(loss).backward(), "
               "scaler.step(optimizer), scaler.update())")
    return (f"; possibly a float16 underflow: {where} (observed: the output's dtype), and no "
            f"GradScaler scaled the loss (observed at the backward() call); a float16 "
            f"gradient entry smaller than about 6e-8 (its smallest subnormal) rounds to 0: "
            f"{fix}")
