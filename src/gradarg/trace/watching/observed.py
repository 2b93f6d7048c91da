"""What the hooks of :mod:`.gradhooks` observe beyond each ``.grad``'s own events, as records:
a ``backward()`` that raised (:class:`Raised`), the exception that ended the block
(:class:`Ended`), what an optimizer holds (:class:`Holding`) and a frozen parameter an
optimizer step moved (:class:`FrozenMoved`).

Imports ``trace.graph.nodes`` (saved values) and ``values`` (non-finite kinds), and from this
package :mod:`.clamplog`, :mod:`.classweights`, :mod:`.columnscale`, :mod:`.gates`,
:mod:`.maskedscores`, :mod:`.maskedsoftmax`, :mod:`.nansource`, :mod:`.peakedsoftmax`,
:mod:`.picked`, :mod:`.ratioone`, :mod:`.reducedfactor`, :mod:`.reducedweights`,
:mod:`.sampling`, :mod:`.samecandidates`, :mod:`.scoreweight`, :mod:`.selfdiff`, :mod:`.selftargets`,
:mod:`.sigmoidsquare`, :mod:`.slip`, :mod:`.signedterms`, :mod:`.smoothing`,
:mod:`.wherepairs` and :mod:`.zeroops` only.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import torch

from ..graph.nodes import first_nodes, saved_value
from ..graph.values import finite as finite_values
from ..graph.values import nonfinite_kinds
from . import (
    gates,
    maskedscores,
    maskedsoftmax,
    peakedsoftmax,
    picked,
    samecandidates,
    sampling,
    selfdiff,
    selftargets,
)
from .clamplog import LOGS, clipped_before_log, weights_of
from .classweights import NLL, weight_as_long_as_batch
from .columnscale import dominant_column
from .gates import Saturated, saturated
from .maskedscores import masked_scores
from .maskedsoftmax import masked_softmax
from .nansource import nan_source
from .peakedsoftmax import peaked_softmax
from .picked import picked_subset
from .ratioone import RATIOS, ratio_of_equals
from .reducedfactor import factor_of_reduced
from .reducedweights import weights_after_reduction
from .samecandidates import same_candidates
from .sampling import MOST_NODES, Sampled, sampled
from .scoreweight import score_weight
from .selfdiff import self_differences
from .selftargets import self_targets
from .sigmoidsquare import SQUARES, saturated_square
from .signedterms import ascended
from .slip import Slip
from .smoothing import heavy_smoothing
from .wherepairs import constant_in_both
from .zeroops import ZERO_FACTOR_STARTS, zero_factors

__all__ = [
    "Ended",
    "FrozenMoved",
    "Holding",
    "Losses",
    "Raised",
    "Slip",
    "deep_slips",
    "fed",
    "holding",
    "losses_of",
    "message",
    "slips",
    "what_moves",
    "zero_why",
]


class Raised(NamedTuple):
    """A ``backward()`` that raised: the error's type, its message (the first sentences,
    without torch's hint), the calls of the model started by then, and whether a gradient
    of that pass had reached a watched parameter."""

    kind: str
    message: str
    forward: int
    reached: bool


def message(error: BaseException) -> str:
    """``error``'s message on one line, without torch's hint, at most 300 characters."""
    text = " ".join(str(error).split()).split(" Hint:")[0]
    return text if len(text) <= 300 else text[:297] + "..."


class Ended(NamedTuple):
    """The exception that ended the ``with`` block (seen by its ``__exit__``): its type, its
    message (the first sentences), where it was raised (``file:line in function``, the
    innermost frame outside torch), whether a ``backward()`` raised it (observed by
    :mod:`.patches`), and the calls of the model started by then."""

    kind: str
    message: str
    where: str
    by_backward: bool
    forward: int


class FrozenMoved(NamedTuple):
    """A parameter with ``requires_grad=False`` that an optimizer step held with a ``.grad``
    that is not None, and that the step changed (its sum before and after differ): ``name``,
    the optimizer's class, and what in its state or its group moves it (momentum, weight
    decay)."""

    name: str
    optimizer: str
    why: str


class Holding(NamedTuple):
    """What one optimizer holds: the watched parameters (``held``), the number of tensors in
    its groups (``size``), whether it holds the probe, the tensors it holds that require
    grad and are not parameters of the watched model (``foreign``) and the ids of those that
    had a ``.grad`` at one of its steps (``fed``, by :func:`fed`)."""

    optimizer: Any
    size: int
    held: list[torch.Tensor]
    has_probe: bool
    foreign: list[torch.Tensor]
    fed: set[int]


def holding(optimizer: Any, cache: dict[int, Holding], owner: Any, probe: Any) -> Holding:
    """What ``optimizer`` holds of the parameters of ``owner`` (``probe``: the watch's probe
    parameter), from ``cache`` (by ``id(optimizer)``) while its groups keep their size."""
    groups = optimizer.param_groups
    size = sum(len(g["params"]) for g in groups)
    cached = cache.get(id(optimizer))
    if cached is None or cached.optimizer is not optimizer or cached.size != size:
        # by id: the owner's keys are alive, so no other object has their id (a tensor's
        # hash is its id, through a Python-level __hash__: slower than id())
        owned = {id(p) for p in owner}
        every = [p for g in groups for p in g["params"]]
        held = [p for p in every if id(p) in owned]
        has_probe = any(p is probe for p in held)
        foreign = [p for p in every
                   if id(p) not in owned and isinstance(p, torch.Tensor) and p.requires_grad]
        cache[id(optimizer)] = cached = Holding(optimizer, size, held, has_probe, foreign,
                                                set())
    return cached


def fed(cached: Holding) -> Holding:
    """At a step of ``cached.optimizer``: notes which of its ``foreign`` tensors have a
    ``.grad`` now (a criterion's own parameters do; a replaced module's do not); returns
    ``cached``."""
    cached.fed.update(id(f) for f in cached.foreign if f.grad is not None)
    return cached


def what_moves(optimizer: Any, p: torch.Tensor) -> str:
    """What in ``optimizer``'s state or ``p``'s group moves ``p`` at a step even with a zero
    gradient: its momentum buffer, its running averages, weight decay (else "its update
    rule")."""
    state = optimizer.state.get(p, {}) if hasattr(optimizer, "state") else {}
    group: dict = next((g for g in optimizer.param_groups
                        if any(q is p for q in g["params"])), {})
    why = [w for w, on in (
        ("its momentum buffer", "momentum_buffer" in state
         and state["momentum_buffer"] is not None),
        ("its running averages (exp_avg)", "exp_avg" in state),
        (f"weight decay {group.get('weight_decay')}", bool(group.get("weight_decay")))) if on]
    return " and ".join(why) or "its update rule"


class Losses(NamedTuple):
    """A ``backward()`` call's losses: their nodes, whether their values were finite (``None``:
    not read), what their first nodes' saved values show makes their gradient zero."""

    nodes: list[Any]
    finite: bool | None
    zero_why: str = ""
    slips: tuple[Slip, ...] = ()
    nan_from: str = ""  # a NaN/Inf loss: the operation outside its domain, or the operand
    sampled: tuple[Sampled, ...] = ()  # sampling nodes (torch.normal) with inputs on the graph
    nonfinite: str = "NaN/Inf"  # the kinds of non-finite value a non-finite loss held
    zero_factors: tuple[Any, ...] = ()  # products by a constant 0 (zeroops.zero_factors)
    gates: Saturated | None = None  # sigmoid gates saturated in every entry (gates.saturated)


def losses_of(tensors: Any) -> Losses:
    """The first argument of ``torch.autograd.backward`` (a tensor or a sequence of them: the
    losses): their autograd nodes, whether their values are finite (read only for floating
    tensors of at most 4096 entries), and :func:`zero_why` of their nodes."""
    ts = [tensors] if isinstance(tensors, torch.Tensor) else list(tensors or ())
    ts = [t for t in ts if isinstance(t, torch.Tensor)]
    nodes = [t.grad_fn for t in ts if t.grad_fn is not None]
    small = [t for t in ts if t.numel() <= 4096 and t.is_floating_point()]
    value = (float(ts[0].detach().float()) if len(ts) == 1 and ts[0].numel() == 1
             and ts[0].is_floating_point() else None)
    if value is not None:  # one number, read once
        finite: bool | None = math.isfinite(value)
    else:
        finite = (all(finite_values(t.detach()) for t in small)
                  if small and len(small) == len(ts) else None)
    # breadth first, so the first 12 nodes are the first 12 of the deep walk
    deep = first_nodes(nodes, MOST_NODES)
    walked = deep[:12]
    kinds = {type(n).__name__ for n in deep}  # each scan below runs only where it can find
    return Losses(nodes, finite, zero_why(walked[:max(len(nodes), 8)]),
                  (*slips(walked, value), *deep_slips(deep, kinds)),
                  nan_source(deep) if finite is False else "",
                  sampled(nodes, deep) if not kinds.isdisjoint(sampling.STARTS) else (),
                  (nonfinite_kinds(small) if finite is False else "") or "NaN/Inf",
                  zero_factors(deep) if not kinds.isdisjoint(ZERO_FACTOR_STARTS) else (),
                  saturated(deep) if not kinds.isdisjoint(gates.STARTS) else None)


_BROADCASTING = ("MseLossBackward0", "SmoothL1LossBackward0", "HuberLossBackward0")
_SOFTMAX = ("SoftmaxBackward0", "LogSoftmaxBackward0")
_ROWS = 64  # rows of nll_loss's input read for their logsumexp
_LOGPROB = 1e-2  # |logsumexp| of a row above which it is not log-probabilities (the log of
# a softmax computed in bfloat16 is off by up to about 4e-3, in float16 by about 4e-4)


# the scans of deep_slips, each with the node classes it starts from
_DEEP = ((maskedsoftmax.STARTS, masked_softmax), (samecandidates.STARTS, same_candidates),
         (maskedscores.STARTS, masked_scores), (selftargets.STARTS, self_targets),
         (picked.STARTS, picked_subset), (peakedsoftmax.STARTS, peaked_softmax))


def deep_slips(deep: list[Any], kinds: set[str] | None = None) -> list[Slip]:
    """:class:`Slip` records read anywhere among ``deep``, a loss's first 256 nodes: a term
    that takes one tensor twice (:mod:`.selfdiff`), a softmax of scores multiplied by a 0/1
    mask (:mod:`.maskedsoftmax`), over identical candidates (:mod:`.samecandidates`) or nearly
    one-hot (:mod:`.peakedsoftmax`), scores multiplied by a 0/1 factor before a log-sigmoid
    (:mod:`.maskedscores`), soft targets equal to the scores' own probabilities
    (:mod:`.selftargets`), a min / max picking a subset (:mod:`.picked`)."""
    if kinds is None:
        kinds = {type(n).__name__ for n in deep}
    found = [scan(deep) for starts, scan in _DEEP if not kinds.isdisjoint(starts)]
    return ((self_differences(deep) if not kinds.isdisjoint(selfdiff.STARTS) else [])
            + [s for s in found if s is not None])


def slips(walked: list[Any], value: float | None) -> list[Slip]:
    """:class:`Slip` records read from the saved values of ``walked``, the first nodes of a
    loss (:func:`~gradarg.trace.graph.nodes.first_nodes`; read before the backward frees them): a regression loss whose input was broadcast to its target's
    shape (an ``ExpandBackward0`` under it: ``torch.broadcast_tensors``, after torch's "Using
    a target size ... different to the input size" warning), ``nll_loss`` given values that
    are not log-probabilities (not from ``log_softmax`` over dimension 1, and the logsumexp
    of their first :data:`_ROWS` rows over dimension 1 not 0), ``ctc_loss`` the same over
    the last dimension, a softmax over dimension 0 of
    a tensor of two or more dimensions.  ``value``: the loss, when one number."""
    found = []
    for n in walked:
        name = type(n).__name__
        if name in SQUARES and (q := saturated_square(n)) is not None:
            found.append(Slip("sigmoid-squared", name, (q.total,), (q.wrong,), value=q.slope))
        if name in _BROADCASTING:
            for c, _ in n.next_functions:
                sizes = _saved(c, "_saved_self_sym_sizes") if c is not None else None
                big = _saved(n, "_saved_self")
                if (type(c).__name__ == "ExpandBackward0" and isinstance(big, torch.Tensor)
                        and tuple(sizes or ()) != tuple(big.shape)):
                    found.append(Slip("broadcast", name, tuple(sizes or ()), tuple(big.shape)))
                    break
            if (same := _equal_sides(n)) is not None:
                found.append(same)
            slip = _huber_slope(n) if name == "HuberLossBackward0" else None
            if slip is not None:
                found.append(slip)
            if (d := dominant_column(n)) is not None:
                found.append(Slip("column-dominates", d.loss, (d.column, d.columns),
                                  low=d.ratio, value=d.share))
        elif name in NLL:
            if (cw := weight_as_long_as_batch(n)) is not None:
                found.append(Slip("class-weight-batch", name, (cw.length,), (cw.moved, cw.absent)))
            below = [c for c, _ in n.next_functions if c is not None]
            if any(type(c).__name__ == "LogSoftmaxBackward0" and _saved(c, "_saved_dim") in
                   (1, -1 if _ndim(c) == 2 else 1) for c in below):
                continue  # log_softmax over the classes: log-probabilities by construction
            x = _saved(n, "_saved_self")
            if isinstance(x, torch.Tensor) and x.dim() >= 2 and x.shape[1] > 1:
                lse = torch.logsumexp(x[:_ROWS].detach().double(), dim=1)
                if lse.numel() and bool(torch.isfinite(lse).all()) and float(lse.abs().max()) > _LOGPROB:
                    found.append(Slip("not-log-probs", name, tuple(x.shape),
                                      low=float(lse.min()), high=float(lse.max()), value=value))
        elif name == "CtcLossBackward0":  # log_probs (T, N, C): classes last
            below = [c for c, _ in n.next_functions if c is not None]
            if any(type(c).__name__ == "LogSoftmaxBackward0" and _saved(c, "_saved_dim") in
                   (-1, _ndim(c) - 1) for c in below):
                continue
            x = _saved(n, "_saved_log_probs")
            if isinstance(x, torch.Tensor) and x.dim() >= 2 and x.shape[-1] > 1:
                lse = torch.logsumexp(x.detach().reshape(-1, x.shape[-1])[:_ROWS].double(), 1)
                if lse.numel() and bool(torch.isfinite(lse).all()) and float(lse.abs().max()) > _LOGPROB:
                    found.append(Slip("not-log-probs", name, tuple(x.shape),
                                      low=float(lse.min()), high=float(lse.max()), value=value))
        elif name in _SOFTMAX and _saved(n, "_saved_dim") == 0:
            out = _saved(n, "_saved_result")
            if isinstance(out, torch.Tensor) and out.dim() >= 2:
                found.append(Slip("softmax-dim-0", name, tuple(out.shape)))
        elif name == "SubBackward0":
            slip = _kl_on_probabilities(n)
            if slip is not None:
                found.append(slip)
        elif name == "AddBackward0" and (b := constant_in_both(n)) is not None:
            found.append(Slip("where-constant", "cosine_embedding_loss" if b.cosine else name,
                              b.shape, (b.constant, b.entries)))
        elif name == "AddBackward0" and (h := heavy_smoothing(n)) is not None:
            found.append(Slip("heavy-smoothing", name, (h.classes,), (), h.true, h.other, h.s))
        elif name in RATIOS and (one := ratio_of_equals(n)) is not None:
            found.append(Slip("ratio-one", one.form, one.shape))
        elif name == "ExpBackward0" and (rf := factor_of_reduced(n)) is not None:
            found.append(Slip("factor-of-reduced", rf.loss, (rf.elements,), value=rf.pt,
                              other=(1,) if rf.how == "mean" else (2,)))
        elif name == "MulBackward0" and (r := weights_after_reduction(n)) is not None:
            found.append(Slip("weights-after-reduction", r.loss, r.shape, value=r.mean,
                              other=(1,) if r.how == "mean" else (2,)))
        elif name in LOGS and (c := clipped_before_log(n, weights_of(n, [
                m for m in walked if any(f is n for f, _ in m.next_functions)]))) is not None:
            nan = float("nan")
            found.append(Slip("clamp-log", c.clamp, c.shape, (c.clipped, c.read),
                              nan if c.low is None else c.low, nan if c.high is None else c.high))
    if (sw := score_weight(walked)) is not None:
        found.append(Slip("score-weight", "MulBackward0", (sw.samples,), (sw.reads,)))
    if walked and (a := ascended(walked[0])) is not None:
        found.append(Slip("ascended", a.term, (), tuple(sorted(a.params)), value=a.factor))
    if walked and value is not None and value <= 0:
        slip = _log_likelihood(walked[0], value)
        if slip is not None:
            found.append(slip)
    return found


HUBER_SLOPE = 0.1  # a Huber delta at most this, every error beyond it: the slope is delta


def _huber_slope(n: Any) -> Slip | None:
    """``huber_loss(input, target, delta)`` whose every error ``|input - target|`` exceeds
    ``delta`` (read from the saved input and target) with ``delta`` at most
    :data:`HUBER_SLOPE`: each element is in the loss's linear part, whose gradient is
    ``delta * sign(error)``, so the loss's gradient is ``delta`` times L1's (PyTorch's
    ``HuberLoss`` docs: Huber loss is ``delta`` times ``SmoothL1Loss`` with ``beta=delta``).
    A :class:`Slip` ``"huber-slope"`` (``value``: delta; ``low`` / ``high``: the errors'
    range)."""
    delta, x, t = (_saved(n, a) for a in ("_saved_delta", "_saved_self", "_saved_target"))
    if not (isinstance(delta, float) and 0 < delta <= HUBER_SLOPE and isinstance(x, torch.Tensor)
            and isinstance(t, torch.Tensor) and 0 < x.numel() <= 1 << 20):
        return None
    error = (x.detach() - t.detach()).abs()
    low = float(error.min())
    if not low > delta:
        return None
    return Slip("huber-slope", type(n).__name__, tuple(x.shape), low=low,
                high=float(error.max()), value=delta)


def _equal_sides(n: Any) -> Slip | None:
    """A regression loss whose input and target are equal in every entry (at least two) while
    both carry gradient (two live edges): the term and its gradient ``2 (x - y) (dx - dy)``
    are exactly 0 (two evaluations of one network on one input, nothing random between them).
    A :class:`Slip` ``"equal-sides"``."""
    x, t = _saved(n, "_saved_self"), _saved(n, "_saved_target")
    live = [c for c, _ in n.next_functions if c is not None]
    if (len(live) == 2 and isinstance(x, torch.Tensor) and isinstance(t, torch.Tensor)
            and x.numel() > 1 and x.shape == t.shape and torch.equal(x, t)):
        return Slip("equal-sides", type(n).__name__, tuple(x.shape))
    return None


def _kl_on_probabilities(n: Any) -> Slip | None:
    """``kl_div(input, target)`` (``log_target=False``) is recorded as ``xlogy(target,
    target) - target * input``: a ``SubBackward0`` whose first edge is None (the xlogy term
    holds no gradient) over a product with one operand carrying the gradient (read from the
    product, or as the saved result of the node that made it: softmax's).  A
    :class:`Slip` ``"kl-probs"`` when that operand's first :data:`_ROWS` rows (over the last
    dimension) are probabilities (entries in [0, 1], summing to 1) and the target is not
    negative: ``value`` is then the mean over those rows of what kl_div summed, which is
    negative (``sum t log t - sum t p`` < 0), where a divergence is never."""
    edges = n.next_functions
    if len(edges) != 2 or edges[0][0] is not None or _saved(n, "_saved_alpha") != 1:
        return None
    m = edges[1][0]
    if type(m).__name__ != "MulBackward0":
        return None
    live = [i for i, (c, _) in enumerate(m.next_functions) if c is not None]
    if len(live) != 1:
        return None
    attrs = ("_saved_self", "_saved_other")
    x, t = _saved(m, attrs[live[0]]), _saved(m, attrs[1 - live[0]])
    if x is None:  # not saved (its own gradient is not needed): the result of the node below
        x = _saved(m.next_functions[live[0]][0], "_saved_result")  # (softmax, sigmoid, exp)
    if not (isinstance(x, torch.Tensor) and isinstance(t, torch.Tensor) and x.dim() >= 1
            and x.shape == t.shape and x.shape[-1] > 1 and x.is_floating_point()):
        return None
    rows = x.detach().reshape(-1, x.shape[-1])[:_ROWS].double()
    target = t.detach().reshape(-1, t.shape[-1])[:_ROWS].double()
    if not (bool((rows >= 0).all()) and bool((rows <= 1).all()) and bool((target >= 0).all())
            and float((rows.sum(-1) - 1).abs().max()) < 1e-3):
        return None
    kl = (torch.xlogy(target, target) - target * rows).sum(-1).mean()
    return Slip("kl-probs", "kl_div", tuple(x.shape), value=float(kl))


# nodes that keep a value's sign and only pick or reduce entries: a loss made of these over
# log_softmax's output is a mean (or sum) of log-probabilities, at most 0
_PICKS = ("GatherBackward0", "IndexBackward0", "SelectBackward0", "TakeAlongDimBackward0",
          "MaskedSelectBackward0", "DiagonalBackward0")
_KEEPS_SIGN = (*_PICKS, "MeanBackward0", "MeanBackward1", "SumBackward0", "SumBackward1",
               "ViewBackward0", "ReshapeAliasBackward0", "SqueezeBackward0", "SqueezeBackward1",
               "SqueezeBackward4", "UnsqueezeBackward0", "SliceBackward0", "CloneBackward0")


def _log_likelihood(root: Any, value: float) -> Slip | None:
    """A loss whose graph from its root down to ``log_softmax`` is a chain of :data:`_KEEPS_SIGN`
    nodes with a pick among them (``gather`` of the target classes): the log-likelihood
    itself, with no minus sign; :class:`Slip` ``"log-likelihood"`` (``value``: the loss)."""
    n, picked = root, False
    for _ in range(12):
        name = type(n).__name__
        if name == "LogSoftmaxBackward0":
            out = _saved(n, "_saved_result")
            shape = tuple(out.shape) if isinstance(out, torch.Tensor) else ()
            return Slip("log-likelihood", name, shape, value=value) if picked else None
        if name not in _KEEPS_SIGN:
            return None
        picked = picked or name in _PICKS
        below = [c for c, _ in n.next_functions if c is not None]
        if len(below) != 1:
            return None
        n = below[0]
    return None


def _ndim(node: Any) -> int:
    out = _saved(node, "_saved_result")
    return out.dim() if isinstance(out, torch.Tensor) else -1


def _saved(node: Any, attr: str) -> Any:
    """:func:`gradarg.trace.graph.nodes.saved_value`, leaving out values saved through
    saved-tensor hooks (reading one would run its unpack hook: a recomputation under
    checkpointing, a copy back from the CPU under ``save_on_cpu``)."""
    return saved_value(node, attr, hooked=False)


def zero_why(walked: list[Any]) -> str:
    """What the saved values of ``walked``, the first nodes of a loss (:func:`~gradarg.trace.graph.nodes.first_nodes`), show
    makes its gradient zero: a ``nll_loss`` (``cross_entropy``) whose total target weight is 0
    (every target equals ``ignore_index`` or has weight 0), a product with a factor of one
    entry that is 0 and needs no gradient (a loss weight of 0), a softmax or log_softmax over
    a dimension of size 1 (constant: zero derivative); ``""``: none of these.  Read
    before the backward frees them (``_saved_*``: the node attributes of
    https://pytorch.org/docs/stable/notes/autograd.html#saved-tensors)."""
    for n in walked:
        name = type(n).__name__
        if name in NLL:
            total = _saved(n, "_saved_total_weight")
            if isinstance(total, torch.Tensor) and total.numel() == 1 and total.item() == 0:
                ignore, x = _saved(n, "_saved_ignore_index"), _saved(n, "_saved_self")
                if isinstance(x, torch.Tensor) and x.numel() == 0:
                    return (f"{name}: no target counted: its input is empty (shape "
                            f"{tuple(x.shape)}), no example was selected, so the loss is a "
                            f"mean over no targets (0/0: NaN) or a sum of none (0), with a "
                            f"zero gradient")
                return (f"{name}: no target counted (total target weight 0: every target "
                        f"equals ignore_index={ignore} or has weight 0), so the loss is a "
                        f"mean over no targets (0/0: NaN) or a sum of none (0), with a zero "
                        f"gradient")
        if name in _SOFTMAX and isinstance(out := _saved(n, "_saved_result"), torch.Tensor):
            dim = _saved(n, "_saved_dim")
            if isinstance(dim, int) and out.dim() and out.shape[dim] == 1 and out.numel():
                fn = "log_softmax" if name == "LogSoftmaxBackward0" else "softmax"
                return (f"{name}: {fn} over dimension {dim % out.dim()} of size 1 (shape "
                        f"{tuple(out.shape)}) is constant ({0 if fn == 'log_softmax' else 1} "
                        f"everywhere), so its derivative is exactly zero: a cross-entropy over "
                        f"a single class or column is exactly 0 (one logit per row; with "
                        f"in-batch negatives, a batch of one pair has no negatives)")
        if name == "ExpBackward0" and isinstance(r := _saved(n, "_saved_result"), torch.Tensor) \
                and r.is_floating_point() and r.numel() and not bool(r.any()):
            return (f"{name}: exp underflowed to 0 in all {r.numel()} entries (its inputs below "
                    f"about {math.log(torch.finfo(r.dtype).tiny):.0f} in {str(r.dtype)[6:]}), "
                    f"and its derivative exp(x) is 0 there too, so no gradient passes: a "
                    f"probability or density taken as exp(log_prob) of values far in the tail; "
                    f"optimise the log-probability itself (log_prob), not its exp")
        if name == "MulBackward0":
            for attr in ("_saved_other", "_saved_self"):
                f = _saved(n, attr)
                if (isinstance(f, torch.Tensor) and f.numel() == 1 and not f.requires_grad
                        and f.item() == 0):
                    return f"{name}: a product with a factor of 0 (a loss weight of 0)"
    return ""
