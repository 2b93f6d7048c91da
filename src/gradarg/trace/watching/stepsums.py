"""Optimizer steps that read sums of unequal numbers of backward passes.

With gradient accumulation each loss is usually divided by the number of micro-batches a step
sums; a step that sums more (a counter that restarts at each epoch, so the micro-batches left
at an epoch's end are carried into the next step) or fewer (a short last group) takes a
gradient that many times larger or smaller, silently.

Seen here, per parameter, from the notes of :mod:`.events`: the passes accumulated into
``.grad`` since it was last empty, at each step of each optimizer; only steps whose sum began
from an empty ``.grad`` after the previous step count (a ``zero_grad`` missing between steps
is another finding: :func:`.eventfindings.accumulated`).  What each pass's loss was multiplied
by is read from its graph at each ``backward()`` call (:class:`LossFactors`: the constant
factor of the one known loss term below a one-number loss, :func:`.signedterms.loss_terms`).
Steps of one optimizer that sum different numbers of passes are a problem when every factor
was read and a step's total is above 1, one mean's worth (``/ accum`` on six passes: 1.5);
totals at most 1 (a short last group, as a data loader's last batch gives) leave a note,
equal totals (each group divided by its own size) say nothing; factors not read leave a note.

Imports :mod:`.events`, :mod:`.finding`, :mod:`.patches`, :mod:`.signedterms` and
``trace.graph.values`` only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import torch

from ..graph.nodes import saved_value
from ..graph.values import tensors as _tensors
from . import events, patches
from .finding import Finding, Options
from .signedterms import TERMS, loss_terms

if TYPE_CHECKING:
    from .watch import GradWatch

__all__ = ["LossFactors", "mean_parts", "step_sums", "uneven_steps"]

MEAN = 1  # torch's Reduction::Mean, as the loss nodes save it
UNEQUAL = 1.25  # divisors this far apart are named

KEPT = 256  # backward calls whose factor is kept (the latest)


def _mean_over(node: Any) -> tuple[str, float] | None:
    """``(loss function, divisor)`` of a loss term computed with ``reduction='mean'``: the
    targets not ignored (their weights' sum, with class weights) of ``nll_loss``, the entries
    of the others; ``None`` for another reduction or a value that cannot be read."""
    if saved_value(node, "_saved_reduction", hooked=False) != MEAN:
        return None
    name = TERMS.get(type(node).__name__, type(node).__name__)
    if type(node).__name__.startswith("NllLoss"):
        total = saved_value(node, "_saved_total_weight", hooked=False)
        return (name, float(total)) if isinstance(total, torch.Tensor) else None
    self_ = saved_value(node, "_saved_self", hooked=False)
    return (name, float(self_.numel())) if isinstance(self_, torch.Tensor) else None


class LossFactors:
    """The constant factor of each outermost ``backward()``'s loss (``None``: not read),
    keyed by the calls of the model started by then, as its passes' notes count them."""

    def __init__(self, watched: Any):
        self.watched = watched
        self.factors: dict[int, float | None] = {}
        # the loss function's name and what its reduction='mean' divided by (None: not a mean)
        self.means: dict[int, tuple[str, float] | None] = {}
        self._handles: list[Any] = []

    def attach(self) -> None:
        self._handles = [patches.register_backward_call_hook(self._called, outer=True)]

    def detach(self) -> list[Any]:
        handles, self._handles = self._handles, []
        return handles

    def _called(self, tensors: Any) -> None:
        roots = [t for t in _tensors(tensors) if t.grad_fn is not None]
        terms = loss_terms(roots[0].grad_fn) if len(roots) == 1 and roots[0].numel() == 1 else []
        at = self.watched.forwards
        self.factors[at] = terms[0][1] if len(terms) == 1 else None
        self.means[at] = _mean_over(terms[0][0]) if len(terms) == 1 else None
        if len(self.factors) > KEPT:
            del self.factors[min(self.factors)], self.means[min(self.means)]


def step_sums(notes: Sequence[events.Note]) -> dict[int, list[list[int]]]:
    """Optimizer id -> for each of its steps whose sum began from an empty ``.grad`` after
    the previous step, the passes summed in ``.grad`` (their ``forward`` counts)."""
    out: dict[int, list[list[int]]] = {}
    passes: list[int] = []
    fresh, after = False, None
    for n in notes:
        if n.kind == "pass":
            if n.held is None or (n.held == 0.0 and after != 0.0):
                passes, fresh = [], True  # .grad empty (None, or zeroed) before this pass
            passes.append(n.forward)
            after = n.after
        elif n.kind == "step":
            if fresh and passes:
                out.setdefault(n.by, []).append(list(passes))
            fresh = False  # the next step counts only after .grad was emptied again
    return out


def _optimizer(w: GradWatch, by: int) -> str:
    """The class name of the optimizer whose ``id`` is ``by`` (its steps' notes name it so)."""
    return next((type(h.optimizer).__name__ for h in w.grads.optimizers
                 if id(h.optimizer) == by), "optimizer")


def uneven_steps(w: GradWatch, o: Options) -> Finding:
    """Steps of one optimizer that read sums of unequal numbers of passes."""
    best: tuple[int, list[list[int]], str] | None = None
    for r in w.parameters.values():
        for by, sums in step_sums(r.events).items():
            if len({len(s) for s in sums}) > 1 and (best is None or len(sums) > len(best[1])):
                best = (by, sums, r.name)
    if best is None:
        return Finding("passes per step", True)
    by, sums, name = best
    kind = _optimizer(w, by)
    counts = [len(s) for s in sums]
    lo, hi = min(counts), max(counts)
    factors = w.factors.factors
    read = [[factors.get(f) for f in s] for s in sums]
    text = (f"the {kind} steps read sums of unequal numbers of backward passes: "
            f"{', '.join(map(str, counts))} (observed: the passes accumulated into .grad of "
            f"{name} since it was last empty, at each step)")
    if all(f is not None for s in read for f in s):
        totals = [sum(s) for s in read]  # type: ignore[arg-type]
        if max(totals) <= min(totals) * (1 + 1e-6) or min(totals) <= 0:
            return Finding("passes per step", True)  # each group scaled by its own size
        if max(totals) <= 1 + 1e-6:  # no step above one mean: a short last group
            return Finding("passes per step", True, note=(
                f"{text}, and their losses' factors add up to "
                f"{', '.join(f'{t:.3g}' for t in totals)}: a step that sums fewer passes "
                f"(a short last group) takes {min(totals) / max(totals):.3g}x the gradient "
                f"of a full one"))
        return Finding("passes per step", True, (
            f"{text}, and their losses' factors add up to "
            f"{', '.join(f'{t:.3g}' for t in totals)} (read from each loss's graph): the step "
            f"of {hi} backward passes takes {max(totals) / min(totals):.3g}x the gradient of "
            f"the step of {lo}; count micro-batches with a counter that does not restart at "
            f"an epoch's end, or divide each loss by the number its step sums"))
    return Finding("passes per step", True, note=(
        f"{text}; a loss divided by a fixed number of micro-batches would make those steps "
        f"unequal (the losses' factors could not be read from their graphs)"))


def mean_parts(w: GradWatch, o: Options) -> Finding:
    """Micro-batches summed at a step whose losses are means over unequal counts."""
    means = w.factors.means
    for r in w.parameters.values():
        for by, sums in step_sums(r.events).items():
            for passes in sums:
                got = [means.get(f) for f in passes]
                if len(got) < 2 or any(g is None for g in got):
                    continue
                names = {g[0] for g in got}  # type: ignore[index]
                over = [g[1] for g in got]  # type: ignore[index]
                if len(names) == 1 and min(over) > 0 and max(over) >= UNEQUAL * min(over):
                    kind = _optimizer(w, by)
                    return Finding("means summed", True, (
                        f"the {len(over)} micro-batches a {kind} step summed are each a mean "
                        f"over their own count ({names.pop()} with reduction='mean', over "
                        f"{', '.join(f'{c:g}' for c in over)} targets or entries, read from "
                        f"each loss's graph): an entry of the smallest weighs "
                        f"{max(over) / min(over):.3g}x one of the largest, so .grad is not the "
                        f"gradient of the mean over all {sum(over):g}; use reduction='sum' "
                        f"and divide by the step's total count once (padding and ignore_index "
                        f"make the counts unequal)"))
    return Finding("means summed", True)
