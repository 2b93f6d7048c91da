"""What can be wrong with a watched step, one function per finding, and the summary line.

Each finding is a function ``finding(w, options) -> Finding``, here or beside the part that
observes it: whether it could be checked, and the phrase for the problem it found.  A new one
joins :data:`FINDINGS`, the summary's order; :func:`problems` and :func:`summary` stay as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .averages import no_forgetting
from .badweights import eps_underflow
from .batchmix import batch_mixed
from .bootstrap import bootstrapped_target
from .closures import closure_sums
from .crossterm import cross_term
from .ctcblank import blank_targets
from .cutcalls import cut_from_the_graph, cut_text
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
)
from .finding import Finding, Options, shown
from .forwarderror import forward_raised
from .frozenhead import frozen_head
from .gates import saturated_gate
from .gaussnll import gaussian_args
from .gridsample import grid_sampled
from .holds import optimizer_holds
from .inputpasses import input_passes
from .intcuts import few_rows, selection
from .kdscale import kd_unsquared
from .lossascent import loss_ascent
from .lossforms import loss_form, loss_nonfinite
from .lossshapes import loss_broadcast
from .magnitudes import dead_units, nonfinite, orders, vanishing_or_exploding
from .magwindow import magnitude_window
from .maskedcopies import decoder_unshifted, masked_copies
from .missing import no_gradient
from .onesvjp import ones_vjp
from .outputrelu import output_relu
from .ownvalue import own_value
from .padreads import pad_read
from .plateau import plateau_cuts
from .reads import (
    block_ended,
    checked,
    not_registered,
    optimizer_read,
    scaler_skipped,
    step_raised,
    step_unmoved,
    step_uphill,
)
from .rowselect import row_select
from .sampling import sampling
from .scales import loss_scale
from .schedules import scheduler_order
from .seeding import seeded
from .selfmatch import self_match
from .sharedmodules import shared_module_calls
from .shiftedwindows import shifted_unmasked
from .silentedits import silent_edit
from .snapshots import snapshot_aliases
from .stepsums import mean_parts, uneven_steps
from .tied import tied_trainable
from .tokenshift import token_shift
from .trainmode import eval_mode, frozen_norm, small_batch_norm, stats_again
from .unused import output_unused
from .upstream import upstream_scaled
from .zerocauses import all_zero, hooks

if TYPE_CHECKING:
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
    return Finding("backward completed", True,
                   f"backward() stopped with an error at {stop.node}{at}: a tensor it saved for "
                   f"the backward was modified in place after it was saved{what}; no gradient "
                   f"reached the {len(stop.below)} parameter(s) below it ({shown(stop.below, 3)}): {stop.fix}")


def target_grad(w: GradWatch, o: Options) -> Finding:
    """A loss whose target (its second argument) leads to parameters of the model in the last
    backward's graph (observed: :mod:`.targets`): they also get the gradient of the target."""
    if not w.targets:
        return Finding("loss targets", True)
    t = w.targets[0]
    if t.same_way:
        return Finding("loss targets", True, note=(
            f"{t.loss} compares two outputs made the same way (the same operations down to "
            f"{len(t.names)} parameter(s): {shown(list(t.names), 3)}; observed in the last "
            f"backward's graph): a symmetric term, both sides get its gradient, as a "
            f"Pi-model's consistency loss between two perturbed passes does; detach one side "
            f"if it is meant to be a fixed target"))
    both = "; its input leads to them too" if t.input_too else ""
    return Finding("loss targets", True, (
        f"the target of {t.loss} (its second argument) carries gradient into "
        f"{len(t.names)} parameter(s) of the model: {shown(list(t.names), 3)} (observed: a "
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
            f"step for {len(back)} parameter(s): {shown([x.name for x in back], 3)} (observed: "
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
        f"optimizer: {shown([x.name for x in swapped], 3)} (observed: after step {s.steps} "
        f"their storage changed, param.data assigned, and {s.differ} of {s.read} sampled "
        f"entries of {s.name} are not what that step left): the next step started from these "
        f"values, so the update of step {s.steps} was thrown away (an EMA's apply_shadow() "
        f"needs its restore() before training goes on)"))


FINDINGS: tuple[Callable[[Any, Options], Finding], ...] = (
    block_ended, step_raised, backward_stopped, nonfinite, recreated, no_gradient,
    cut_from_the_graph, output_unused, not_registered, optimizer_holds, vanishing_or_exploding, dead_units,
    all_zero, hooks, accumulated, input_passes, uneven_steps, mean_parts, loss_scale, edited_after_backward, edit_discarded,
    edited_after_step, silent_edit, optimizer_read, eps_underflow, scaler_skipped, step_unmoved, step_uphill, values_swapped,
    scheduler_order, plateau_cuts, target_grad, graphless_term, zero_derivative, index_selection, grad_leaked,
    modes_mixed, eval_mode, frozen_norm, small_batch_norm, stats_again, loss_form, loss_nonfinite, loss_broadcast,
    loss_ascent, kd_unsquared, ones_vjp, tied_trainable, token_shift, sampling, sample_cut, self_match, blank_targets,
    pad_read, closure_sums, bootstrapped_target, seeded, row_select, frozen_head,
    no_forgetting, upstream_scaled, magnitude_window, grid_sampled,
    output_relu, gaussian_args, saturated_gate, snapshot_aliases, cross_term, batch_mixed,
    shared_module_calls, shifted_unmasked, masked_copies, decoder_unshifted, own_value,
)


def run(w: GradWatch, **kwargs: Any) -> list[Finding]:
    """Every finding, in order; none when no backward pass reached the model."""
    if not w.watched.backward_seen:
        ended = block_ended(w, Options())
        then = "" if ended.problem is None or (w.grads.raised is not None and (
            w.grads.ended is not None and w.grads.ended.by_backward)) else f"; {ended.problem}"
        return [Finding("backward", True,
                        "no backward pass reached the model" + raised(w) + leaf_loss(w)
                        + forward_raised(w) + cut_text(w) + then)]
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


# what a "gradients ok" line cannot vouch for, said on the line itself: a loss that computes the
# wrong thing (a target branch left attached, a flipped sign, a mask over the wrong entries)
# gives finite, nonzero gradients that the optimizer reads as it should
UNSEEN = "; not seen by a watch: whether the loss computes what you meant"


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
            spread = (f", norms at the layers within {orders(max(flow) / min(flow))} "
                      f"orders of magnitude")
        which = "trainable parameter" if frozen else "parameter"
        expected = [n for f in results for n in f.expected]
        but = f" but {shown(expected, 3)}" if expected else ""
        claim, scope, short = checked(w)
        if claim:
            line = f"gradients ok: every {which}{but} got a finite, nonzero gradient{spread}"
            line += f" ({scope})" if checks else short
            line += UNSEEN
        else:
            line = scope
    for f in results:
        if f.note:
            line += f"; {f.note}"
    if frozen:
        line += (f"; {len(frozen)} of {len(w.parameters)} parameters are frozen "
                 f"(requires_grad=False: backward skips them): {shown(frozen, 3)}")
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
