"""Findings on the gradients' sizes: NaN/Inf gradients and where the forward or the loss
made them, a gradient that vanishes or explodes across the layers, ReLU-like units that are
dead.  Read from the module and parameter records, the graph's notes and the parameters'
values; imports the trace's ``graph`` room and the watch's own small readers only."""

from __future__ import annotations

import math
from collections import Counter
from typing import TYPE_CHECKING, Any, cast

from ..graph.values import fmt_norm as _f
from .badweights import nonfinite_params
from .finding import Finding, Options, shown
from .graphnotes import Made
from .operations import describe as _ops

if TYPE_CHECKING:
    from .records import ModuleRecord
    from .watch import GradWatch

__all__ = ["DEAD_SUPPORT", "dead_units", "gate_text", "nonfinite", "orders", "saturated_text",
           "vanishing_or_exploding"]


def nonfinite(w: GradWatch, o: Options) -> Finding:
    first = w.first_nonfinite()
    bad = [n for n, r in w.parameters.items() if r.state == "nonfinite"]
    if first is not None or bad:
        where = ""
        if first is not None:
            where = f" first sent by '{first.name}' ({first.kind})"
            ops = w.graph.operations(first.index)
            if ops:
                where += (f", whose own operations are {_ops(ops)} (read from the graph; the "
                          f"gradient arriving at its output was finite)")
        made, over = w.graph.forward_nan, w.graph.overflow
        c: Any = w.modules[made[0]] if made is not None and made[0] < len(w.modules) else None
        if w.detail.located is not None:  # a light step: the call its sums located
            c, over = w.detail.located, w.detail.located.overflow
            made = Made(0, c.how, c.op, c.singular, c.held)
        then = ("; the model's output, the loss and every gradient through them hold NaN/Inf "
                "then")
        if c is not None and made is not None and made.how == "input":
            held = f", holding {made.held}" if made.held else ""
            log0 = (" (log(0) is -inf: a log taken of zeros, such as silent or padded frames, "
                    "gives it; take log(x + eps))" if "-inf" in made.held else "")
            where = (f": the forward pass met NaN/Inf in an input of module '{c.name}' "
                     f"({c.kind}) that has no history (the data, or a constant){held}{log0}: "
                     f"check it with torch.isfinite(x).all() before the forward{then}")
        elif c is not None:
            dtype = ("" if over is None else
                     f" (its output is {over[0]}, whose largest finite value is {over[1]:g}: "
                     f"an overflow; under autocast, run it in float32 or scale its input "
                     f"down)")
            if own := nonfinite_params(w, c.name):  # the weights, read before an overflow
                dtype = (f" (its parameter {own[0][0]} holds NaN/Inf in {own[0][1]} of "
                         f"{own[0][2]} entries, read at the block's end: its weights)")
            at = "" if made is None or not made.op else (
                f", at its operation {made.op}" + (f", {made.singular}" if made.singular else ""))
            where = (f": the forward pass already made NaN/Inf in module '{c.name}' ({c.kind}), "
                     f"whose input is finite (checked) and whose output is not{at}{dtype}{then}")
        elif first is None:
            # already NaN/Inf where it reached the model: made outside it (the loss)
            outer = [c for c in w.modules if c.parent is None and c.grad_out is not None
                     and not math.isfinite(c.grad_out)]
            # a call after a backward (the layers called one by one over several iterations:
            # one record) only where no earlier call shows it
            outer = [c for c in outer if c.index not in w.calls.late] or outer
            if outer:
                c = outer[0]
                where = (f": already NaN/Inf where it arrives at the output of '{c.name}' "
                         f"({c.kind}), so the loss, or what follows the model, made it"
                         f"{_loss_made(w)}")
        named = f": {shown(bad, 3)}" if bad else ""
        return Finding("non-finite", True,
                       f"non-finite gradient{where}: {len(bad)} parameter(s) got NaN/Inf{named}")
    return Finding("non-finite", True)


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
    first, last = f"'{flow[0].name}' ({flow[0].kind})", f"'{flow[-1].name}' ({flow[-1].kind})"
    if ratio <= 1 / o.factor:
        return Finding("vanishing/exploding", True,
                       f"vanishing gradient: {orders(ratio)} orders of magnitude smaller "
                       f"at {first} than at {last}{_between(span)}"
                       f"{_sharpest(ratio, span)}{saturated_text(w, flow[0].index, flow[-1].index)}"
                       f"{gate_text(w)}")
    if ratio >= o.factor:
        return Finding("vanishing/exploding", True,
                       f"exploding gradient: {orders(ratio)} orders of magnitude larger "
                       f"at {first} than at {last}{_between(span)}"
                       f"{_sharpest(ratio, span)}{_explosion_causes(w)}")
    return Finding("vanishing/exploding", True)


DEAD_SUPPORT = 8  # values per unit (examples x positions) before "dead" is stated as a fact


def dead_units(w: GradWatch, o: Options) -> Finding:
    """ReLU-like units whose output was 0 for every value of the batch: a fact when each unit
    had at least :data:`DEAD_SUPPORT` values (examples times positions), else what was seen
    on this batch (a note: one example says nothing about every example)."""
    for c in w.modules:
        if c.dead_units and c.dead_units[0] >= o.dead_fraction * c.dead_units[1]:
            n = c.dead_support
            if n and n < DEAD_SUPPORT:
                return Finding("dead units", True, note=(
                    f"seen on this batch only: '{c.name}' ({c.kind}) output 0 for {c.dead_units[0]} of "
                    f"{c.dead_units[1]} units ({c.unit_axis}) on the {n} example(s) and "
                    f"position(s) of this batch, too few to call a unit dead (at least "
                    f"{DEAD_SUPPORT} needed)"))
            support = f" (support: {n} examples and positions per unit)" if n else ""
            return Finding("dead units", True,
                           f"dead units: '{c.name}' ({c.kind}) has {c.dead_units[0]} of "
                           f"{c.dead_units[1]} units ({c.unit_axis}) at 0 for every example "
                           f"and position of the batch{support}")
    return Finding("dead units", True)


def gate_text(w: GradWatch, *, zero: bool = False) -> str:
    """A product by a gate that was small (``zero``: exactly 0) at the block's first backward
    (:mod:`.zerogates`), in words, with the gate's parameter as it is now; ``""`` when the
    graph held none."""
    g = w.lossnodes.found.get("zerogates")
    if g is None or (zero and g.largest != 0):
        return ""
    name = next((n for p, (n, _) in w.watched.owner.items() if p is g.param), None)
    if name is None:
        return ""
    now = float(g.param.detach().abs().max())
    how = f"{'('.join(g.ops)}({name}{')' * len(g.ops)}" if g.ops else name
    more = f" (and {g.gates - 1} more such product(s))" if g.gates > 1 else ""
    return (f"; the graph multiplies a branch by {how}{more}, a gate whose entries were at most "
            f"{g.largest:.2g} in size at the block's first backward and are at most {now:.2g} "
            f"now (observed: the product's saved operand; the parameter read at the block's "
            f"end): a gate initialised at zero or near it (Flamingo's tanh gates, ReZero, "
            f"LayerScale) scales the gradient of everything before it in that branch by its "
            f"size, exactly 0 on the first step, so a small gradient there is expected until "
            f"the gate grows")


def _explosion_causes(w: GradWatch) -> str:
    """What the graph showed of periodic activations of a scaled input (:mod:`.sines`) and
    of residual branches without normalisation (:mod:`.residuals`)."""
    s, r = w.lossnodes.found.get("sines"), w.lossnodes.found.get("residuals")
    res = "" if r is None else (
        f"; the forward adds {r.adds} residual branches to a stream, x + f(x), with no "
        f"normalisation in the graph (observed: the graph of the block's first backward): "
        f"each block's Jacobian is I + J_f, so with the branches at their usual initial "
        f"scale the stream and its gradient grow with every block; scale each branch's last "
        f"layer down at init (by about 1 / sqrt(number of blocks), or to zero) or normalise")
    if s is None:
        return res
    return res + (f"; the forward applies sin or cos to an input multiplied by {s.factor:g} "
            f"({s.times} time(s); observed: the graph of the block's first backward): each "
            f"multiplies the gradient by up to {s.factor:g} (the derivative of "
            f"sin({s.factor:g} x) is {s.factor:g} cos({s.factor:g} x)), so unless the weights "
            f"after the first layer are scaled down by about {s.factor:g} (SIREN's init: "
            f"uniform(+-sqrt(6 / fan_in) / {s.factor:g})) the gradient grows from layer to "
            f"layer")


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


def saturated_text(w: GradWatch, after: int, upto: int) -> str:
    """``"; the input of 'dec' (Linear) is a softmax output with 31 of 32 rows exactly
    one-hot ..."``: a call between ``after`` and ``upto`` (indices, the first and last layer
    of a vanishing gradient) took a softmax's output at least half of whose rows were exactly
    one-hot (observed at the call: ``CallNotes.saturated``); else ``""``."""
    seen = [(i, k, n) for i, (k, n) in w.calls.noted.saturated.items()
            if after < i <= upto and i < len(w.modules) and 2 * k >= n]
    if not seen:
        return ""
    i, k, n = max(seen, key=lambda x: x[1] / x[2])
    c = w.modules[i]
    return (f"; the input of '{c.name}' ({c.kind}) is a softmax output with {k} of {n} rows "
            f"exactly one-hot (observed at the call): a saturated softmax, whose Jacobian "
            f"diag(y) - y yᵀ is 0 on such a row, sends no gradient back through it; its "
            f"logits are too large for its temperature (gumbel_softmax's tau too low, "
            f"logits scaled up): raise the temperature or scale the logits down")


def _loss_made(w: GradWatch) -> str:
    """What is known of the loss of the last ``backward()``: its operations after the model
    (read from the graph) and whether its value was finite (observed at the call)."""
    ops = w.graph.loss_operations
    finite = w.grads.losses.finite
    text = ""
    if finite is False:
        text = (f" (the loss passed to backward() was itself {w.grads.losses.nonfinite}: "
                f"observed at the call)")
        if w.grads.losses.nan_from:
            text += f"; {w.grads.losses.nan_from}"
    elif finite:
        text = (" (the loss passed to backward() was finite, observed at the call: its "
                "backward made the NaN/Inf)")
    if ops:
        text += f"; the operations between the model's output and the loss: {_ops(ops)}"
    return text


def _between(span: list[ModuleRecord]) -> str:
    """``" (between them: 12 Sigmoid, 12 Linear)"``: the kinds of the innermost modules the
    gradient crossed from the last layer to the first, most frequent first (three at most)."""
    kinds = Counter(c.kind for c in span)
    if not kinds:
        return ""
    top = sorted(kinds.items(), key=lambda kv: -kv[1])[:3]
    return " (between them: " + ", ".join(f"{n} {k}" for k, n in top) + ")"


def orders(ratio: float) -> str:
    return f"{abs(math.log10(ratio)):.1f}"
