"""A loss computed in a form that trains something else than what was meant, read from the
saved values of its first autograd nodes at the ``backward()`` call
(:func:`gradarg.trace.watching.observed.slips`): a regression loss that broadcast its input
against a target of another shape (every prediction compared with every target),
``nll_loss`` given values that are not log-probabilities (no ``log_softmax``: the loss is
unbounded below), a softmax over dimension 0 whose size is the batch's (each example's
output then depends on the other examples), ``kl_div`` given probabilities (a negative
"divergence"), a log-likelihood minimised without its minus sign, a Huber loss whose small
``delta`` scales every gradient down.  Every gradient is finite and nonzero in these
steps, so without this finding the summary would say "ok".

Imports :mod:`.finding`, :mod:`.maskedscores`' ``AT_ZERO``, :mod:`.nansource`'s ``EMPTY`` and ``GRAPHLESS``,
:mod:`.peakedsoftmax`'s ``peaked_words`` and :mod:`.selfdiff` only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import torch

from . import selfdiff
from .finding import Finding, Options
from .maskedscores import AT_ZERO
from .nansource import EMPTY, GRAPHLESS, MASKED, ZERO_LOG
from .peakedsoftmax import peaked_words

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = ["loss_form", "loss_nonfinite"]

_FUNCTION = {"MseLossBackward0": "mse_loss (nn.MSELoss)",
             "SmoothL1LossBackward0": "smooth_l1_loss (nn.SmoothL1Loss)",
             "HuberLossBackward0": "huber_loss (nn.HuberLoss)"}


# the loss's function, its classes' dimension, what to do instead
_LOGPROBS = {
    "NllLossBackward0": ("nll_loss", "dimension 1",
                         "apply log_softmax first, or use cross_entropy on the raw outputs"),
    "CtcLossBackward0": ("ctc_loss", "the last dimension",
                         "apply log_softmax(dim=-1) to the outputs first"),
}


def _shape(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def loss_form(w: GradWatch, o: Options) -> Finding:
    """The :class:`~.observed.Slip` records of the last ``backward()``'s loss, in words, with
    what to change: the first two of different kinds that are problems (one can hide another:
    a column that dominates the loss, and predictions no row picked), in :func:`_form`'s
    order."""
    every = w.grads.losses.slips
    said: list[Finding] = []
    for kind in sorted({s.kind for s in every}, key=ORDER.__getitem__):
        f = _form(w, [s for s in every if s.kind == kind], every)
        if f.problem is not None or f.note:
            said.append(f)
        if sum(f.problem is not None for f in said) == 2:
            break
    problems = [f.problem for f in said if f.problem is not None]
    if not problems:
        return said[0] if said else Finding("loss form", True)
    notes = [f.note for f in said if f.note]
    return Finding("loss form", True, "; ".join(problems), note=notes[0] if notes else "")


ORDER = {"broadcast": 0, "softmax-dim-0": 1, "not-log-probs": 2, "kl-probs": 3,
         "log-likelihood": 4, "huber-slope": 5, "clamp-log": 6, "where-constant": 7,
         "weights-after-reduction": 8, "ascended": 9,
         "column-dominates": 10, "class-weight-batch": 11, "ratio-one": 12,
         "heavy-smoothing": 13, "factor-of-reduced": 14, "sigmoid-squared": 15,
         "equal-sides": 16, "self-difference": 17, "masked-softmax": 18,
         "same-candidates": 19, "masked-scores": 20,
         "self-targets": 21, "picked-subset": 22, "peaked-softmax": 23, "score-weight": 24}


def _form(w: GradWatch, slips: list[Any], every: Sequence[Any]) -> Finding:
    """The first of ``slips`` (of one kind) that is a problem, in words, with what to change
    (a softmax over dimension 0 only when that dimension's size is the batch size of the
    model's last call: a sequence-first layout normalises there on purpose); ``every``: all
    the loss's slips."""
    batch = w.modes.batch
    also = (" (which is also why the values the loss got are not log-probabilities over the "
            "classes)" if any(s.kind == "not-log-probs" for s in every) else "")
    ascent = any(g.get("maximize") for h in w.grads.optimizers
                 for g in h.optimizer.param_groups)  # an optimizer that maximises on purpose
    for s in slips:
        if s.kind == "huber-slope" and s.value:
            return Finding("loss form", True, (
                f"huber_loss (nn.HuberLoss) with delta={s.value:g}: every error |input - "
                f"target| of {_shape(s.shape)} is beyond delta ({s.low:.3g} to {s.high:.3g}; "
                f"observed: the values saved by its graph), where its gradient is delta * "
                f"sign(error), so the loss's gradient is {s.value:g} times L1's ("
                f"{1 / s.value:.3g} times smaller); delta sets the slope of the linear part: "
                f"raise it to the errors' scale (nn.SmoothL1Loss(beta) keeps slope 1)"))
        if s.kind == "clamp-log":
            return _clamp_log(s)
        if s.kind == "where-constant":
            return _where_constant(s)
        if s.kind == "self-difference":
            return _self_difference(w, s)
        if s.kind == "masked-softmax":
            masked, entries, axis = s.other
            return Finding("loss form", True, (
                f"a softmax over dim {axis} of {_shape(s.shape)} took scores multiplied by a 0/1 "
                f"mask ({masked} of {entries} entries 0; observed: the mask MulBackward0 saved "
                f"and the softmax's output): a masked score becomes 0, and exp(0) still gives "
                f"it weight, so each row puts {s.value:.2g} of its weight on average on the "
                f"positions the mask meant to hide (non-edges, padding, later tokens); give "
                f"them the lowest score before the softmax instead: scores.masked_fill(mask == "
                f"0, torch.finfo(scores.dtype).min)"))
        if s.kind == "same-candidates":
            return _same_candidates(s)
        if s.kind == "peaked-softmax":
            problem, note = peaked_words(s)
            return Finding("loss form", True, problem, note=note)
        if s.kind == "masked-scores":
            return _masked_scores(s)
        if s.kind == "picked-subset" and (said := _picked_subset(w, s)) is not None:
            return said
        if s.kind == "self-targets":
            return Finding("loss form", True, (
                f"the soft targets of a cross-entropy (or kl_div) over scores {_shape(s.shape)} "
                f"are the model's own current probabilities, softmax of the very logits it "
                f"scores (observed: the targets its graph saved equal exp of its log_softmax "
                f"output, to {s.value:.1g}): a detached copy of the same computation, so the "
                f"term's gradient softmax(z) - p is zero and it holds nothing in place; record "
                f"the targets once, before training (Learning without Forgetting's old-task "
                f"outputs), or compute them with a frozen copy of the model (a teacher)"))
        if s.kind == "equal-sides":
            return Finding("loss form", True, (
                f"{_FUNCTION.get(s.op, s.op)} compares two tensors {_shape(s.shape)} that are "
                f"equal in every entry, both carrying gradient (observed: the input and target "
                f"saved by its graph): the term is exactly 0 and so is its gradient, "
                f"2 (x - y) (dx - dy); two evaluations of one network on one input agree "
                f"unless something random differs between them: a consistency loss (Pi-model, "
                f"mean teacher) needs its noise, augmentation or dropout in train mode"))
        if s.kind == "sigmoid-squared":
            return Finding("loss form", True, (
                f"a squared error on sigmoid outputs: {s.other[0]} of {s.shape[0]} predictions "
                f"are saturated on the wrong side (p (1 - p) at most {s.value:.2g} while "
                f"|target - p| > 0.5; observed: the values saved by the loss's graph): the "
                f"squared loss's gradient carries the sigmoid's derivative p (1 - p), so these "
                f"wrong predictions barely move (a vanishing gradient); fit probabilities with "
                f"binary_cross_entropy_with_logits on the logits (its gradient is p - target, "
                f"never flat), or start from small logits"))
        if s.kind == "factor-of-reduced":
            how = "mean" if s.other == (1,) else "sum"
            return Finding("loss form", True, (
                f"the loss takes exp(-L) = {s.value:.4g} of L, {s.op} already reduced to one "
                f"number over {s.shape[0]} elements (reduction='{how}'; observed: the exp of the "
                f"negated loss its graph saved): a factor such as focal loss's (1 - pt) ** "
                f"gamma made from it is one number for the whole batch, so it weighs every "
                f"example and label alike, none is down-weighted (with the loss a function of L "
                f"alone, its gradient is {s.op}'s times a constant); compute the "
                f"loss with reduction='none', take pt = exp(-loss) and the factor per element, "
                f"then reduce"))
        if s.kind == "heavy-smoothing":
            return _smoothing(s)
        if s.kind == "score-weight":
            return Finding("loss form", True, (
                f"the loss multiplies log-probabilities by a weight (an advantage or reward) "
                f"that carries gradient from the log-probabilities of other samples: "
                f"{s.other[0]} of the other {s.shape[0] - 1} samples' log-probabilities move "
                f"one entry of it (observed: the product's saved operands and the gradient of "
                f"the weight's first entry with respect to the log_softmax's output), "
                f"so backward also goes through the advantage, sum_i logp_i * dA_i, a term the "
                f"policy gradient A_i * dlogp_i does not have (for example a KL penalty beta * "
                f"(logp - logp_ref) folded into the reward, then a baseline or the batch's mean "
                f"and std subtracted, all with the graph kept); detach the reward or the advantage "
                f"(A.detach()), or compute it under torch.no_grad()"))
        if s.kind == "ratio-one":
            return Finding("loss form", True, (
                f"the loss takes a ratio {s.op} that is exactly 1 in all {math.prod(s.shape)} "
                f"entries while both a and b carry gradient (observed: the values and edges "
                f"saved by its graph): b holds a's values and keeps its graph, so where b was "
                f"computed by the same weights the gradient of a - b, da - db, cancels on "
                f"them (PPO's exp(logp - old_logp) with the rollout's log-probabilities not "
                f"detached: a zero policy gradient); detach b (old_logp.detach(), or compute "
                f"it under torch.no_grad() at the rollout)"))
        if s.kind == "class-weight-batch":
            moved, absent = s.other
            return Finding("loss form", True, (
                f"{s.op} (cross_entropy / nll_loss) got weight= with {s.shape[0]} entries, as "
                f"many as the batch's rows and the classes: it is one weight per class, read "
                f"for sample i as weight[target[i]] (the mean divides by the sum of those), "
                f"so {moved} of the {s.shape[0]} samples are weighted by another entry than "
                f"their own row's and {absent} classes of the batch have no sample (observed: "
                f"the weight and targets saved by its graph); if these are per-sample "
                f"weights, compute the loss with reduction='none', multiply by them and "
                f"reduce ((loss * w).sum() / w.sum())"))
        if s.kind == "column-dominates":
            column, columns = s.shape
            return Finding("loss form", True, (
                f"{s.op} over {columns} output columns: column {column} makes "
                f"{100 * (s.value or 0):.4g}% of the loss, its targets' scale (root mean "
                f"square) {s.low:.3g} times the smallest column's (observed: the input and "
                f"target saved by the loss's graph), so it dominates the gradient and the "
                f"shared layers train for it, barely for the other columns; standardise each "
                f"target column (or weight the columns)"))
        if s.kind == "ascended" and (text := _ascended(w, s)):
            return Finding("loss form", True, text)
        if s.kind == "weights-after-reduction" and batch is not None and s.shape[0] == batch:
            how = "mean" if s.other == (1,) else "sum"
            return Finding("loss form", True, (
                f"a loss already reduced to one number ({s.op}, reduction='{how}') is "
                f"multiplied by a tensor of {_shape(s.shape)} weights without gradient, one "
                f"per example of the batch (observed: the product saved by the loss's graph): "
                f"the one number is broadcast against them, so every example is scaled by "
                f"the same factor (the weights' mean, {s.value:.4g}, once averaged), none by "
                f"its own weight; compute the per-example losses with reduction='none', "
                f"multiply them by the per-sample weights, then reduce"))
        if s.kind == "kl-probs":
            return Finding("loss form", True, (
                f"kl_div was given probabilities, not log-probabilities: the rows of its input "
                f"{_shape(s.shape)} lie in [0, 1] and sum to 1 (observed: the values saved by "
                f"kl_div's graph), so what it computed, {s.value:.4g} per row, is no divergence (a KL "
                f"divergence is never negative); pass log_softmax(...) as its input (the "
                f"target stays probabilities, or log-probabilities with log_target=True)"))
        if s.kind == "log-likelihood" and not ascent:
            return Finding("loss form", True, (
                f"the loss is a log-likelihood with no minus sign: log_softmax's output "
                f"{_shape(s.shape)}, picked at the targets and reduced, {s.value:.4g} "
                f"(observed: from the loss down to log_softmax its graph only picks and "
                f"reduces entries); minimising it lowers the probability of the targets: "
                f"minimise its negative (F.nll_loss on log-probabilities, F.cross_entropy on "
                f"the raw outputs)"))
        if s.kind == "broadcast":
            return Finding("loss form", True, (
                f"{_FUNCTION.get(s.op, s.op)} compared tensors of different shapes: its input "
                f"{_shape(s.shape)} was broadcast against the target to {_shape(s.other)} "
                f"(observed: the shapes saved by the loss's graph; torch warns 'Using a "
                f"target size ... different to the input size'), so every prediction is "
                f"compared with every target and the model fits their mean: make the shapes "
                f"equal (squeeze the output or unsqueeze the target)"))
        if s.kind == "not-log-probs":
            value = "" if s.value is None else f"; the loss was {s.value:.4g}"
            sign = ", below zero: a negative log-likelihood of log-probabilities is never " \
                   "negative" if s.value is not None and s.value < 0 else ""
            fn, dim, instead = _LOGPROBS.get(s.op, _LOGPROBS["NllLossBackward0"])
            return Finding("loss form", True, (
                f"{fn} was given values that are not log-probabilities: their logsumexp "
                f"over the classes ({dim}) ranges from {s.low:.3g} to {s.high:.3g} "
                f"where log_softmax's is 0 (observed: the input saved by {s.op}){value}{sign}; "
                f"on raw outputs the loss has no lower bound: {instead}"))
        if s.kind == "softmax-dim-0" and batch is not None and s.shape[0] == batch > 1:
            return Finding("loss form", True, (
                f"a softmax over dim 0 of a {_shape(s.shape)} tensor, whose size there ({batch}) "
                f"is the batch size of the model's input: it normalises across the examples "
                f"of the batch, so each example's output depends on the other examples "
                f"(observed: the dimension saved by {s.op}){also}; normalise over the "
                f"classes (dim=-1 or dim=1)"))
    return Finding("loss form", True)


def _self_difference(w: GradWatch, s: Any) -> Finding:
    """The finding of a :mod:`.selfdiff` term: what it takes twice and what to keep instead."""
    terms = [t for t in w.grads.losses.slips if t.kind == "self-difference"]
    ids = {i for t in terms for i in t.other}
    names = [n for n, p in w.model.named_parameters() if id(p) in ids]
    what = (f"parameter(s) {', '.join(names[:3])}{', ...' if len(names) > 3 else ''}"
            if names else "a tensor" + (f" of shape {_shape(s.shape)}" if s.shape else ""))
    result = "1" if s.op == "DivBackward0" else "0"
    return Finding("loss form", True, (
        f"the loss {selfdiff.said(s.op)} in {len(terms)} term(s): both "
        f"operands of {s.op} are one tensor ({what}; observed: its two inputs in the loss's "
        f"graph are one node), so the result is exactly {result} whatever the values and "
        f"those terms send no gradient back: an anchor, target or reference kept as the "
        f"tensor itself, not a copy of its value (an EWC anchor, a teacher's weights, a "
        f"target from an earlier step): store p.detach().clone()"))


def _clamp_log(s: Any) -> Finding:
    """The finding of a :mod:`.clamplog` slip: the clipped entries and what to do."""
    k, read = s.other
    bounds = ", ".join(f"{name}={b:.8g}" for name, b in (("min", s.low), ("max", s.high))
                       if not math.isnan(b)) or "tensor bounds"
    pinned = (f", their loss pinned at -log({s.low:g}) = {-math.log(s.low):.3g}"
              if not math.isnan(s.low) and s.low > 0 else "")
    weighted = " with a nonzero weight" if read < math.prod(s.shape) else ""
    return Finding("loss form", True, (
        f"the loss takes the log of a clamp ({s.op}, {bounds}): {k} of the {read} entries "
        f"the log reads{weighted} are outside its bounds (observed: the clamp's input saved by the "
        f"loss's graph), where clamp's derivative is 0, so they send exactly zero gradient "
        f"back: the examples they belong to (with probabilities: the most confidently wrong "
        f"ones) do not train{pinned}; compute the loss from the raw outputs (F.cross_entropy, "
        f"log_softmax, F.binary_cross_entropy_with_logits), which keeps their gradient"))


def _ascended(w: GradWatch, s: Any) -> str:
    """The finding of a :mod:`.signedterms` slip: the modules whose every parameter the
    subtracted term alone reaches (``""``: none of the model's)."""
    ids = set(s.other)
    names = [n for n, p in w.model.named_parameters() if id(p) in ids]
    if not names:
        return ""
    modules = sorted({n.rpartition(".")[0] or n for n in names})
    top = sorted({m.split(".")[0] for m in modules})
    where = ", ".join(f"'{m}'" for m in top)
    shown = ", ".join(names[:4]) + (", ..." if len(names) > 4 else "")
    if s.value == 0:
        return (f"module {where} gets its gradient only from a term of the loss weighted by "
                f"0, 0 × {s.op} ({len(names)} parameter(s): {shown}; observed: the factors "
                f"along the loss's graph and the parameters below each term): its gradient is "
                f"exactly zero and it does not train; a task weight of 0 (for example alpha = 1 in "
                f"alpha * loss_a + (1 - alpha) * loss_b) turns that task off; if a schedule "
                f"(a warm-up) starts it at 0, this lasts until the weight moves")
    return (f"module {where} gets its gradient only from a term subtracted from the loss, "
            f"{s.value:+.3g} × {s.op} ({len(names)} parameter(s): {shown}; observed: the "
            f"signs along the loss's graph and the parameters below each term): a step on "
            f"them maximises that loss, training {where} to be wrong at its own task (gradient "
            f"ascent); if the rest of the model is to be trained against it (domain-"
            f"adversarial), add the term with a plus sign and reverse the gradient only where "
            f"it enters the shared layers (a gradient reversal layer)")


def _where_constant(s: Any) -> Finding:
    """The finding of a :mod:`.wherepairs` slip."""
    k, n = s.other
    form = ("F.cosine_embedding_loss (nn.CosineEmbeddingLoss), recorded as where(target == 1, "
            "1 - cos, 0) + where(target == -1, clamp(cos - margin, min=0), 0)"
            if s.op == "cosine_embedding_loss" else "a sum of two where(...) selections, "
            "each with a constant branch")
    fix = ("its targets must be 1 (similar pair) or -1 (dissimilar): labels 0 and 1 leave "
           "every pair labelled 0 with zero loss; map them with 2 * label - 1"
           if s.op == "cosine_embedding_loss" else
           "check that the conditions cover every entry meant to train")
    return Finding("loss form", True, (
        f"{k} of the {n} entries of the loss took the constant branch of both selections of "
        f"{form} (observed: the conditions saved by its graph), so their loss is exactly 0 "
        f"with zero gradient whatever the model outputs; {fix}"))


def loss_nonfinite(w: GradWatch, o: Options) -> Finding:
    """A loss whose value is NaN/Inf (observed at the ``backward()`` call) while every
    parameter's gradient is finite: an operation whose value is NaN outside its domain while
    its derivative there is finite (``log`` of a negative number: ``1/x``), located from the
    loss's saved values where found (:func:`.nansource.nan_source`)."""
    losses = w.grads.losses
    if losses.finite is not False or any(r.state == "nonfinite"
                                          for r in w.parameters.values()):
        return Finding("loss finite", True)
    where = (f": {losses.nan_from}, read from the loss's graph (its derivative there is "
             f"finite)" if losses.nan_from else
             ": no operation outside its domain was found among the loss's first nodes")
    if any(said in losses.nan_from for said in (EMPTY, GRAPHLESS, ZERO_LOG, MASKED)):
        return Finding("loss finite", True, (
            f"the loss passed to backward() is {losses.nonfinite} (its value, observed at the "
            f"call) while every parameter's gradient is finite: {losses.nan_from}"))
    return Finding("loss finite", True, (
        f"the loss passed to backward() is {losses.nonfinite} (its value, observed at the "
        f"call) while every parameter's gradient is finite{where}; the gradients follow the "
        f"formula of the derivative, not the loss's value: fix the loss (log of abs(x) or of "
        f"a positive quantity, a clamp into the domain) so that what you minimise is what you "
        f"log"))


def _smoothing(s: Any) -> Finding:
    classes = s.shape[0]
    return Finding("loss form", True, (
        f"cross_entropy with label_smoothing={s.value:.3g} over {classes} classes trains "
        f"towards a target of {s.low:.3g} on the true class and {s.high:.3g} on each other "
        f"class (uniform would be {1 / classes:.3g}; observed: the factors 1 - s and s / C its "
        f"graph saved): label_smoothing is the share of the label's mass taken from the true "
        f"class and spread over all C classes, not the mass the true class keeps, so the "
        f"labels barely pull the outputs apart; typical values are 0.05 to 0.2 (a target p "
        f"on the true class is label_smoothing = (1 - p) * C / (C - 1))"))


def _same_candidates(s: Any) -> Finding:
    """The words for a ``"same-candidates"`` slip (:mod:`.samecandidates`)."""
    count, product = s.shape[s.other[0]], ("MmBackward0", "BmmBackward0")[s.other[1]]
    return Finding("loss form", True, (
        f"a softmax over {count} candidates that are all the same: the scores "
        f"{_shape(s.shape)} come from a matrix product ({product}) whose {count} candidate "
        f"columns are identical (observed: its saved operand, and each row of the softmax's "
        f"output holds one value): the softmax is uniform, a cross-entropy over it is log "
        f"{count} = {s.value:.4g} whatever the parameters, and its gradient cancels, "
        f"sum_j (p_j - y_j) v = 0 for one candidate v, so the step has no signal (the "
        f"gradients left are rounding); every in-batch negative is the positive itself: "
        f"shuffle so that a batch holds distinct items, drop duplicates of the positive "
        f"from the negatives, or check whether the embeddings collapsed to one point"))


def _masked_scores(s: Any) -> Finding:
    """The words for a ``"masked-scores"`` slip (:mod:`.maskedscores`)."""
    function, value = AT_ZERO[s.op]
    zeros, entries = s.other
    return Finding("loss form", True, (
        f"{function} took scores multiplied by a 0/1 tensor ({zeros} of {entries} entries 0; "
        f"observed: the factor its MulBackward0 saved): where the factor is 0 the score is 0 "
        f"whatever the parameters and {function} still gives it {value} (sigmoid(0) = 1/2), "
        f"so those entries add a constant to the loss and send no gradient back, they are "
        f"not removed; if the 0/1 values are branch codes or labels meant as signs, map them "
        f"to -1/+1 with 2 * b - 1; if they are a mask, multiply the per-entry loss by it "
        f"after {function} (or pass weight=mask to the BCE)"))


def _picked_subset(w: GradWatch, s: Any) -> Finding | None:
    """The words for a ``"picked-subset"`` slip (:mod:`.picked`), said only beside a watched
    parameter whose ``.grad`` has rows that are exactly zero while others are not."""
    dim, picked = s.other
    for p, (name, _) in w.watched.owner.items():
        g = p.grad
        if not isinstance(g, torch.Tensor) or g.dim() < 2 or g.layout != torch.strided:
            continue
        zero = int((g.detach().reshape(g.shape[0], -1) == 0).all(1).sum())
        if 0 < zero < g.shape[0]:
            how = "min" if s.op.startswith("Min") else "max"
            return Finding("loss form", True, (
                f"the loss takes the {how} over dim {dim} of {_shape(s.shape)} ({s.op}): only "
                f"{picked} of the {s.shape[dim]} entries along that dimension were picked by "
                f"any row (observed: the indices it saved), and a {how}'s gradient reaches "
                f"only what it picks, so the other {s.shape[dim] - picked} get none from it; "
                f"{zero} of the {g.shape[0]} rows of {name}.grad are exactly zero (read from "
                f".grad as the summary was made): a one-sided nearest-neighbour (Chamfer) or "
                f"winner-take-all term trains only what it picks; add the other direction "
                f"(the {how} over the other dimension) or a soft {how} (logsumexp)"))
    return None
