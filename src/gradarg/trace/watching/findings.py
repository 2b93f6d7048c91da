"""What can be wrong with a watched step, one function per finding, and the summary line.

Each finding is a function ``finding(w, options) -> Finding``, here or beside the part that
observes it: whether it could be checked, and the phrase for the problem it found.  A new one
joins :data:`FINDINGS`, the summary's order; :func:`problems` and :func:`summary` stay as they are.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from ..graph.values import fmt_norm as _f
from .badweights import eps_underflow, nonfinite_params
from .ctcblank import blank_targets
from .cutcalls import cut_calls, cut_from_the_graph, cut_text
from .detail import light_findings, seen_first
from .draws import sample_cut
from .eventfindings import (
    accumulated,
    edit_discarded,
    edited_after_backward,
    edited_after_step,
    grad_leaked,
    modes_mixed,
    recreated,
    scheduler_order,
)
from .finding import Finding, Options
from .graphnotes import Made
from .inputpasses import input_passes
from .intcuts import few_rows, said, selection
from .lossascent import loss_ascent
from .lossforms import loss_form, loss_nonfinite
from .lossshapes import loss_broadcast
from .missing import no_gradient
from .operations import describe as _ops
from .reads import (
    block_ended,
    checked,
    not_registered,
    optimizer_holds,
    optimizer_read,
    scaler_skipped,
    step_raised,
    step_unmoved,
)
from .sampling import sampling
from .scales import loss_scale
from .selfmatch import self_match
from .stepsums import mean_parts, uneven_steps
from .tied import tied_trainable
from .tokenshift import token_shift
from .trainmode import eval_mode, frozen_norm, small_batch_norm, stats_again
from .zerocauses import all_zero, hooks

if TYPE_CHECKING:
    from .records import ModuleRecord
    from .watch import GradWatch

__all__ = ["FINDINGS", "Finding", "Options", "problems", "summary"]


def backward_stopped(w: GradWatch, o: Options) -> Finding:
    """The backward pass stopped with torch's error at a saved tensor modified in place after
    it was saved (read from the version counters of the saved tensors still on the graph)."""
    stop = w.graph.stopped_at()
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
                f", at its operation {made.op}" + (f", whose value is infinite at "
                                                   f"{made.singular}" if made.singular else ""))
            where = (f": the forward pass already made NaN/Inf in module '{c.name}' ({c.kind}), "
                     f"whose input is finite (checked) and whose output is not{at}{dtype}{then}")
        elif first is None:
            # already NaN/Inf where it reached the model: made outside it (the loss)
            outer = [c for c in w.modules if c.parent is None and c.index not in w.calls.late
                     and c.grad_out is not None and not math.isfinite(c.grad_out)]
            if outer:
                c = outer[0]
                where = (f": already NaN/Inf where it arrives at the output of '{c.name}' "
                         f"({c.kind}), so the loss, or what follows the model, made it"
                         f"{_loss_made(w)}")
        named = f": {_shown(bad, 3)}" if bad else ""
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
                       f"vanishing gradient: {_orders(ratio)} orders of magnitude smaller "
                       f"at {first} than at {last}{_between(span)}"
                       f"{_sharpest(ratio, span)}")
    if ratio >= o.factor:
        return Finding("vanishing/exploding", True,
                       f"exploding gradient: {_orders(ratio)} orders of magnitude larger "
                       f"at {first} than at {last}{_between(span)}"
                       f"{_sharpest(ratio, span)}")
    return Finding("vanishing/exploding", True)


def unused_output_calls(w: GradWatch) -> list[ModuleRecord]:
    """The calls whose output has history but got no gradient, of modules no call of which
    got one; calls started after the backward (checkpoint recomputations) do not count."""
    flowed = {c.name for c in w.modules if c.grad_out is not None}
    return [c for c in w.modules if c.out_shape is not None and c.grad_out is None
            and c.index not in w.calls.late and c.name not in flowed]


def output_unused(w: GradWatch, o: Options) -> Finding:
    """A module call whose output has autograd history but received no gradient in a step
    whose backward reached the model: nothing on the way to the loss used that output (an
    encoder state not passed on, an output detached after the module).  Calls that started
    after the backward (recomputation by checkpointing) do not count."""
    calls = w.modules
    if w.graph.stopped_at() is not None or w.grads.raised is not None:
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
                   f"that received no gradient{more}: {unused_why(w, c)}{through}")


def unused_why(w: GradWatch, c: ModuleRecord) -> str:
    """Why the output of call ``c`` got no gradient, as far as was observed: taken by a later
    module without its history (detached in between), else not used with its history."""
    after = w.calls.detached.get(c.index)
    if after is not None and after < len(w.modules):
        d = w.modules[after]
        return (f"module '{d.name}' ({d.kind}) took that output without its history "
                f"(observed: the same memory, no autograd graph), so it was detached between "
                f"them (.detach() or .data); remove the detach to train '{c.name}'")
    cut = next((k for k in w.cuts.found if c.index in k.calls), None)
    if cut is not None:
        return said(cut, c.name)
    later = [(i, dtype) for i, dtype in w.calls.noted.integer_inputs.items()
             if i > c.index and i < len(w.modules) and i not in w.calls.late
             and w.modules[i].parent == c.parent]
    if later:
        i, dtype = later[0]
        d = w.modules[i]
        return (f"nothing on the way to the loss uses it with its history; module '{d.name}' "
                f"({d.kind}), called after it, took an integer tensor ({dtype}) as input "
                f"(observed): if that was computed from this output (argmax, an index, "
                f".long(), round), integer values carry no gradient, so the path is cut "
                f"there; use a differentiable relaxation (softmax weights) to train "
                f"'{c.name}'")
    return ("nothing on the way to the loss uses it with its history (a returned state not "
            "passed on, or a use of its values without history that no watched module shows)")


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


def _shown(names: list[str], k: int = 2) -> str:
    return ", ".join(names[:k]) + (", ..." if len(names) > k else "")


def target_grad(w: GradWatch, o: Options) -> Finding:
    """A loss whose target (its second argument) leads to parameters of the model in the last
    backward's graph (observed: :mod:`.targets`): they also get the gradient of the target."""
    if not w.targets:
        return Finding("loss targets", True)
    t = w.targets[0]
    both = "; its input leads to them too" if t.input_too else ""
    return Finding("loss targets", True, (
        f"the target of {t.loss} (its second argument) carries gradient into "
        f"{len(t.names)} parameter(s) of the model: {_shown(list(t.names), 3)} (observed: a "
        f"path in the last backward's graph from the loss's target to them{both}), so they "
        f"also get the gradient of the target; if it is meant to be fixed (a bootstrapped "
        f"Q-learning target, a teacher's output), detach it or compute it under "
        f"torch.no_grad()"))


def graphless_term(w: GradWatch, o: Options) -> Finding:
    """A ``backward()`` whose loss held a term computed from ``torch.autograd.grad``'s result
    without ``create_graph=True`` (observed: :mod:`.graphless`): it adds nothing to any
    gradient."""
    if not w.terms.found:
        return Finding("graphless terms", True)
    t = w.terms.found[0]
    grad_at = f" at {t.grad_at}" if t.grad_at else ""
    added_at = f" (added at {t.added_at})" if t.added_at else ""
    return Finding("graphless terms", True, (
        f"the loss passed to backward() holds a term computed from torch.autograd.grad's "
        f"result{grad_at}, called without create_graph=True{added_at} (observed: the term was "
        f"followed from that result into the loss): that gradient carries no graph, so the "
        f"term (a gradient penalty?) changes the loss's value and adds nothing to any "
        f"parameter's gradient; pass create_graph=True to torch.autograd.grad"))


def index_selection(w: GradWatch, o: Options) -> Finding:
    """A module whose input was selected by an integer index computed in the forward and has
    no path back to what the index was computed from (:func:`.intcuts.selection`)."""
    return Finding("index selections", True, selection(w) or few_rows(w))


def zero_derivative(w: GradWatch, o: Options) -> Finding:
    """A derivative taken with ``create_graph=True`` (to be differentiated again) that was
    exactly zero everywhere (observed: :mod:`.graphless`): a loss term built from it gives
    the parameters no gradient."""
    if not w.terms.zero_derivatives:
        return Finding("zero derivatives", True)
    z = w.terms.zero_derivatives[0]
    at = f" at {z.site}" if z.site else ""
    why = (f"its graph holds {', '.join(z.linear_ops[:3])}: piecewise-linear operations such as "
           f"ReLU have a second derivative of 0 everywhere, so" if z.linear_ops else
           "a function linear in that input (or one it does not depend on) has a second "
           "derivative of 0 everywhere, and piecewise-linear ones such as ReLU too, so")
    return Finding("zero derivatives", True, (
        f"torch.autograd.grad(..., create_graph=True){at} returned a derivative that is 0 "
        f"everywhere (shape {z.shape}; observed): {why} a loss term built from it (a "
        f"physics-informed residual, a curvature penalty) trains nothing; use a smooth "
        f"activation (Tanh, SiLU, Softplus, GELU) for a loss on higher derivatives"))


def values_swapped(w: GradWatch, o: Options) -> Finding:
    """Parameters whose storage was replaced between two steps of an optimizer and whose
    values are not what the first step left (observed: :mod:`.stepmoves`, the storage and a
    sample of entries after one step and before the next)."""
    swapped = list(w.grads.moves.swapped.values())  # none before a second step
    back = list(w.grads.moves.reverted.values())
    if back and not swapped:
        r = back[0]
        return Finding("values between steps", True, (
            f"the update of {r.optimizer} step {r.steps} was undone in place before the next "
            f"step for {len(back)} parameter(s): {_shown([x.name for x in back], 3)} (observed: "
            f"{r.back} of the {r.moved} sampled entries of {r.name} that the step changed are "
            f"again bit for bit what they were before it): the weights do not move; an edit "
            f"after optimizer.step() (rounding the weights back onto a quantisation grid, a "
            f"clamp, a copy of saved weights) reverts each update: keep float master weights "
            f"and quantise in the forward (fake quantisation with a straight-through "
            f"estimator)"))
    if not swapped:
        return Finding("values between steps", True)
    s = swapped[0]
    return Finding("values between steps", True, (
        f"{len(swapped)} parameter(s) replaced between two {s.optimizer} steps, outside the "
        f"optimizer: {_shown([x.name for x in swapped], 3)} (observed: after step {s.steps} "
        f"their storage changed, param.data assigned, and {s.differ} of {s.read} sampled "
        f"entries of {s.name} are not what that step left): the next step started from these "
        f"values, so the update of step {s.steps} was thrown away (an EMA's apply_shadow() "
        f"needs its restore() before training goes on)"))


FINDINGS: tuple[Callable[[Any, Options], Finding], ...] = (
    block_ended, step_raised, backward_stopped, nonfinite, recreated, no_gradient,
    cut_from_the_graph, output_unused, not_registered, optimizer_holds, vanishing_or_exploding, dead_units,
    all_zero, hooks, accumulated, input_passes, uneven_steps, mean_parts, loss_scale, edited_after_backward, edit_discarded,
    edited_after_step, optimizer_read, eps_underflow, scaler_skipped, step_unmoved, values_swapped,
    scheduler_order, target_grad, graphless_term, zero_derivative, index_selection, grad_leaked,
    modes_mixed, eval_mode, frozen_norm, small_batch_norm, stats_again, loss_form, loss_nonfinite, loss_broadcast,
    loss_ascent, tied_trainable, token_shift, sampling, sample_cut, self_match, blank_targets,
)


def run(w: GradWatch, **kwargs: Any) -> list[Finding]:
    """Every finding, in order; none when no backward pass reached the model."""
    if not w.watched.backward_seen:
        ended = block_ended(w, Options())
        then = "" if ended.problem is None or (w.grads.raised is not None and (
            w.grads.ended is not None and w.grads.ended.by_backward)) else f"; {ended.problem}"
        return [Finding("backward", True,
                        "no backward pass reached the model" + raised(w) + leaf_loss(w)
                        + cut_text(w) + then)]
    options = Options(**kwargs)
    results = [finding(w, options) for finding in FINDINGS]
    if w.detail.full:
        return results
    g = w.grads
    return light_findings(w.detail, results, seen_first(g.passes, w.watched.owner, g.losses[1]))


def leaf_loss(w: GradWatch) -> str:
    """``"; the loss ... is a leaf tensor ..."``: a ``backward()`` of the block was given a
    loss with no graph (observed at the call: :mod:`.graphless`); else ``""``."""
    if not w.terms.leaf_losses:
        return ""
    at = w.terms.leaf_losses[-1]
    return (f"; the loss passed to backward(){' at ' + at if at else ''} is a leaf tensor "
            f"with no graph back to the model (grad_fn None, requires_grad=True: observed at "
            f"the call), a tensor made anew rather than computed from the model's output "
            f"(torch.tensor(...) of a .item(), .detach() or NumPy value?), so its gradient "
            f"reaches no parameter; compute the loss with torch operations on the output")


def raised(w: GradWatch) -> str:
    """``"; a backward() call in the block raised ..."``: the error of the last
    ``backward()`` that raised in the block, no gradient of it having reached a watched
    parameter, as observed (the call raised); else ``""``."""
    r = w.grads.raised
    if r is None or r.reached:
        g = w.terms.grad_errors
        return "" if r is not None or not g else (
            f"; a torch.autograd.grad call{f' at {g[0][2]}' if g[0][2] else ''} raised "
            f"{g[0][0]} (observed: the call raised): {g[0][1]}")
    return (f"; a backward() call in the block raised {r.kind} (observed: the call raised, the "
            f"error went on to the caller): {r.message}")


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
        claim, scope, short = checked(w)
        if claim:
            line = f"ok: every {which}{but} got a finite, nonzero gradient{spread}"
            line += f" ({scope})" if checks else short
        else:
            line = scope
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


def _loss_made(w: GradWatch) -> str:
    """What is known of the loss of the last ``backward()``: its operations after the model
    (read from the graph) and whether its value was finite (observed at the call)."""
    ops = w.graph.loss_operations
    finite = w.grads.losses.finite
    text = ""
    if finite is False:
        text = " (the loss passed to backward() was itself NaN/Inf: observed at the call)"
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
    shown = sorted(kinds.items(), key=lambda kv: -kv[1])[:3]
    return " (between them: " + ", ".join(f"{n} {k}" for k, n in shown) + ")"


def _orders(ratio: float) -> str:
    return f"{abs(math.log10(ratio)):.1f}"
