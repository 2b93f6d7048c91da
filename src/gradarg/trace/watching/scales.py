"""What an optimizer step read of ``.grad`` against the gradients of the losses behind it:
at their scale (:func:`loss_scale`: a ``GradScaler``'s ``scale`` before each backward and its
``unscale_`` before the step, observed), and, under DDP, averaged over the processes
(:func:`ddp_unsynced`: the backward before the step synchronised, read at its forward).

"ok" is a claim about what the optimizer reads; a step that reads every gradient 65536 times
too small (``unscale_`` of a loss that was never scaled) or 1024 times too large (a scaled
loss, then a plain ``optimizer.step()``), or each process's own gradient where DDP should
have averaged it, reads finite, nonzero gradients all the same: these findings are what
stands between such a step and "ok".
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, cast

from ..graph.values import fmt_norm as _f
from . import events
from .eventfindings import WHEN, scale_text
from .finding import Finding, Options

if TYPE_CHECKING:
    from .records import ParamRecord
    from .watch import GradWatch

__all__ = ["ddp_unsynced", "loss_scale", "param_text", "times", "wrong_reads"]

_REL = 1e-6  # scales and unscale_ factors are powers of 2: their products are exact


def _who(k: int, total: int) -> str:
    return "every parameter" if k == total else f"{k} of {total} parameters"


def _one(x: float) -> bool:
    return abs(x - 1.0) <= _REL


def times(f: float) -> str:
    """``"65536"``, ``"1/65536"`` or ``"3.2"``: a factor in words."""
    if f >= 1:
        return f"{f:.0f}" if abs(f - round(f)) <= _REL * f else _f(f)
    return f"1/{scale_text(f)}"


def _kind(r: events.ScaleRead, edit: float) -> tuple[str, float] | None:
    """``(kind, factor)`` of a read of ``.grad`` that is not at the loss's scale, else
    ``None``: ``"not unscaled"`` (scaled losses, no ``unscale_``), ``"not scaled"``
    (``unscale_`` of unscaled losses), ``"mixed"`` (passes at different factors) or
    ``"other"``; ``factor``: what ``.grad`` held of the losses' gradient."""
    fs = cast(tuple[float, ...], r.factors)
    if max(fs) > min(fs) * (1 + _REL):
        return "mixed", max(fs, key=lambda f: abs(math.log(f)))
    f = fs[0]
    if _one(f) or _one(f * edit):  # at the loss's scale (or an edit of .grad brought it back)
        return None
    scales = set(r.scales)
    if r.unscale is None and len(scales) == 1 and _one(f / cast(float, r.scales[0])):
        return "not unscaled", f
    if r.unscale is not None and scales == {1.0}:
        return "not scaled", f
    return "other", f


def wrong_reads(w: GradWatch, r: ParamRecord) -> list[tuple[events.ScaleRead, str, float, float]] | None:
    """The reads of parameter ``r``'s ``.grad`` (:func:`.events.scale_reads`) that were not
    at the losses' scale: ``(read, kind, factor, edit)`` each (see :func:`loss_scale`);
    ``None`` when nothing read its ``.grad``."""
    reads = events.scale_reads(r.events)
    if not reads:
        return None
    out = []
    for s in reads:
        if any(f is None for f in s.factors):
            continue  # a loss of unknown scale, or a gradient from before the notes
        edit = s.edit if w.watched.exact and s.edit and math.isfinite(s.edit) else 1.0
        kind = _kind(s, edit)
        if kind is not None:
            out.append((s, kind[0], kind[1], edit))
    return out


def param_text(w: GradWatch, r: ParamRecord) -> str:
    """``"; the optimizer step read it at 1024 times ..."``: the last read of ``r``'s
    ``.grad`` that was not at the loss's scale, for ``why_no_grad``; else ``""``."""
    got = wrong_reads(w, r) if r.events else None
    if not got:
        return ""
    s, kind, f, _ = got[-1]
    when = "the optimizer step read it" if s.when == "step" else ".grad held it at the end"
    cause = {"not unscaled": "its loss was scaled by a GradScaler and nothing unscaled .grad",
             "not scaled": "a GradScaler's unscale_ divided it, but its loss was not scaled",
             "mixed": "it sums backward passes at different scales"}.get(kind, "")
    return (f"; {when} at {times(f)} times the loss's gradient"
            + (f" ({cause}: observed at the backward() call and unscale_)" if cause else ""))


def loss_scale(w: GradWatch, o: Options) -> Finding:
    """Every read of ``.grad`` in the block (each optimizer step, and the end of the block
    when no step followed the last backward: :func:`.events.scale_reads`) against the
    losses' gradients: each backward's loss scale (observed at the ``backward()`` call: the
    output of a ``GradScaler``'s ``scale`` or not) times the ``unscale_`` calls observed
    after it.  A step that read ``.grad`` at another scale is a problem, named with the
    factor; ``.grad`` still scaled at the end of the block with no step seen, a note; an
    ``unscale_`` that brought it back, a note with the scale it divided by."""
    wrong: list[tuple[str, events.ScaleRead, str, float, float]] = []
    total = 0
    for r in w.parameters.values():
        if r.requires_grad and r.events:
            found = wrong_reads(w, r)
            total += bool(found is not None)
            wrong += [(r.name, *x) for x in found or ()]
    if not wrong:
        return _unscale_note(w)
    last = max(s.forward for _, s, _, _, _ in wrong)
    at = [x for x in wrong if x[1].forward == last]
    groups: dict[tuple[str, str], list[tuple[str, events.ScaleRead, str, float, float]]] = {}
    for x in at:
        groups.setdefault((x[2], times(x[3])), []).append(x)
    (kind, _), got = max(groups.items(), key=lambda kv: len(kv[1]))
    names = list(dict.fromkeys(n for n, *_ in got))
    _, s, _, f, edit = got[0]
    steps = {(x[1].forward, x[1].by) for x in wrong if x[1].when == "step"}
    who = f"{_who(len(names), total)} ({', '.join(names[:2])}{', ...' if len(names) > 2 else ''})"
    text = _text(kind, s, f, edit, who)
    if len(steps) > 1:
        text += f" ({len(steps)} optimizer steps in this with block read .grad so)"
    if s.when == "end" and kind == "not unscaled":
        return Finding("GradScaler scale", True, note=text)
    return Finding("GradScaler scale", True, text)


def _text(kind: str, s: events.ScaleRead, f: float, edit: float, who: str) -> str:
    where = WHEN[s.when]
    read = "the optimizer step read" if s.when == "step" else "at the end of the with block"
    if kind == "not unscaled":
        held = read if s.when == "step" else f"{read}, .grad held"
        text = (f"{held} .grad of {who} at {times(f)} times the loss's gradient: the loss of "
                f"its backward was scaled by a GradScaler (scaler.scale(loss), scale "
                f"{times(f)}, observed at the backward() call) and nothing unscaled .grad "
                f"before {where} (no scaler.step(optimizer) or scaler.unscale_(optimizer) "
                f"in between, observed)")
        if s.when == "end":
            return (text + ": scaler.step(optimizer), or scaler.unscale_(optimizer), must "
                           "come before an optimizer reads it")
        if not _one(edit):
            text += (f"; an edit of .grad before the step (clipping) multiplied it by "
                     f"{edit:.3g}, so the step read {times(f * edit)} times the loss's gradient")
        return text + ("; step with scaler.step(optimizer) and scaler.update() instead of "
                       "optimizer.step(), or call scaler.unscale_(optimizer) before it")
    if kind == "not scaled":
        return (f"GradScaler's unscale_ (scaler.step runs it) divided .grad of {who} by its "
                f"scale, {times(1 / f)}, before {where}, but the loss of that backward was not "
                f"scaled (loss.backward(), not scaler.scale(loss).backward(): observed at the "
                f"backward() call), so {'the step read' if s.when == 'step' else 'it holds'} "
                f"gradients {times(1 / f)} times smaller than the loss's gradient "
                f"(x {times(f)}); call scaler.scale(loss).backward() before scaler.step(optimizer)")
    shown = ", ".join(f"x {times(cast(float, x))}" for x in dict.fromkeys(s.factors))
    scales = ", ".join(times(cast(float, x)) for x in dict.fromkeys(s.scales))
    unscale = "none" if s.unscale is None else times(1 / s.unscale)
    if kind == "mixed":
        return (f".grad of {who} sums {len(s.factors)} backward passes at different scales "
                f"when {where} read it: their losses' gradients {shown} (loss scales "
                f"{scales}; unscale_ calls in between divide only what .grad held then; "
                f"observed at each backward() call and unscale_), so no single factor brings "
                f"the sum back to the losses' gradient; scale every loss with scaler.scale "
                f"before its backward, and unscale_ once, after the last")
    held = read if s.when == "step" else f"{read}, .grad held"
    return (f"{held} .grad of {who} at {times(f)} times the loss's gradient (loss scale "
            f"{scales}, unscale_ by {unscale}, observed)")


def _unscale_note(w: GradWatch) -> Finding:
    """An observed ``unscale_`` between the backward and the step (or the end of the block)
    that brought ``.grad`` back to the loss's scale: a note with the scale it divided by."""
    seen = [(r, events.after_backward(r.events))
            for r in w.parameters.values() if r.grad is not None and r.events]
    got = [(r, a) for r, a in seen if a.unscale is not None]
    if not got:
        return Finding("GradScaler scale", True)
    factors = sorted({cast(float, a.unscale) for _, a in got})
    scales = " and ".join(scale_text(f) for f in factors)
    where = WHEN[got[0][1].when or "end"]
    return Finding("GradScaler scale", True, note=(
        f"GradScaler's unscale_ divided .grad of {_who(len(got), len(seen))} by its scale, "
        f"{scales}, after backward and before {where} (observed: the call itself)"))


def ddp_unsynced(w: GradWatch) -> tuple[list[str], str] | None:
    """Under DDP with several processes: the parameters whose ``.grad`` the last read
    (an optimizer step, else the end of the block) took after a backward that did not
    synchronise (its forward ran with ``require_backward_grad_sync`` off: inside
    ``no_sync()``), and ``"step"`` or ``"end"``; ``None`` when there are none."""
    if w.engine != "DDP" or w.world <= 1:
        return None
    names, when = [], "end"
    for r in w.parameters.values():
        ev = r.events
        last = max((i for i, n in enumerate(ev) if n.kind == "pass"), default=None)
        if last is None:
            continue
        read = next((n for n in ev[last + 1:] if n.kind in ("step", "end")), None)
        if read is None or read.held is None:
            continue
        if w.grads.synced(ev[last].forward) is False:
            names.append(r.name)
            when = "step" if read.kind == "step" else when
    return (names, when) if names else None
