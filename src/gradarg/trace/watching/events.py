"""What happened to each parameter's ``.grad`` during a watched block, in order, as observed.

The hooks of :mod:`.gradhooks` log what they see as :class:`PassEntry`, :class:`StepEntry` and
:class:`EndEntry` records, read into one :class:`Note` per observation of a parameter's ``.grad``:
each backward pass that accumulated into it (a post-accumulate-grad hook,
``torch.Tensor.register_post_accumulate_grad_hook``, after the tensor hook that saw the
pass's own gradient and what ``.grad`` held before), each optimizer step that holds it
(``torch.optim.optimizer.register_optimizer_step_pre_hook``: what ``.grad`` holds when the step
begins), and the end of the block.  The functions here read those notes: how many passes
the final ``.grad`` sums (:func:`chain`), whether each followed its own forward, an optimizer
step or none (:func:`accumulation`), and what happened to ``.grad`` between the last pass and
the step, or the end of the block (:func:`after_backward`).  Nothing is inferred from the
final ``.grad`` alone: a reset is a ``.grad`` seen None (or all zero) after a pass filled it,
a scale is the ratio of two norms read at two observed moments.

A parameter re-created in ``forward`` (``self.w = nn.Parameter(...)``) is observed by a
parameter registration hook (``torch.nn.modules.module.register_module_parameter_registration_hook``):
:class:`Replacement`.

Imports nothing of the trace room.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, NamedTuple

__all__ = ["KEPT", "Accumulation", "AfterBackward", "EndEntry", "Entry", "HookedPass", "Note",
           "PassEntry",
           "Replacement", "ScaleEntry", "ScaleRead", "StepEntry", "UnscaleEntry", "accumulation",
           "after_backward", "chain", "read_log", "scale_reads"]

KEPT = 64  # notes kept per parameter (the latest): enough for the last step's story

_REL = 1e-5  # two norms of one tensor read at two moments agree to this (float32 sums)


class Note(NamedTuple):
    """One observation of one parameter's ``.grad``.

    Attributes
    ----------
    kind : str
        ``"pass"`` (a backward pass accumulated into ``.grad``), ``"unscale"`` (a
        ``GradScaler``'s ``unscale_`` of an optimizer holding the parameter divided ``.grad``
        by the scale), ``"step"`` (an optimizer step holding the parameter began), ``"end"``
        (the ``with`` block ended) or ``"cut"`` (first of a list cut to the latest
        ``events.KEPT``: earlier observations were not kept).
    grad : float or None
        ``"pass"``: norm of the gradient the pass computed for the parameter.
    held : float or None
        Norm of ``.grad`` before the pass (``"pass"``) or at that moment (``"step"``, ``"end"``);
        ``None``: ``.grad`` was None.  NaN: present, not read (:attr:`measured` is False).
    after : float or None
        ``"pass"``: norm of ``.grad`` after the accumulation (``None``: not read, or ``.grad``
        was None then: a hook of the user's cleared it).
    forward : int
        Calls of the watched model that had started before this observation.
    step : int
        Optimizer steps holding this parameter that had begun before this observation.
    measured : bool
        ``held`` was read (``False`` at a step where one smaller parameter's ``.grad`` was read
        and found unchanged, so the others were not: see ``after_backward`` in this module).
    factor : float or None
        ``"unscale"``: what ``unscale_`` multiplied ``.grad`` by (1 / the scaler's scale).
    scale : float or None
        ``"pass"``: the loss scale of the ``backward()`` call the pass came from: ``S`` when its
        loss was the output of a ``GradScaler``'s ``scale`` (observed), 1 when it was not,
        ``None`` when not known (a loss that adds a scaled and an unscaled term).
    raw : float or None
        ``"pass"``: norm of the gradient backward computed, before the hooks of the user's on
        the parameter (``Tensor.register_hook``) replaced it with what ``grad`` measures;
        ``None``: the parameter had no such hook.
    by : int
        ``"step"``: ``id`` of the optimizer whose step it was.
    """

    kind: str
    grad: float | None
    held: float | None
    after: float | None
    forward: int
    step: int
    measured: bool = True
    factor: float | None = None
    scale: float | None = 1.0
    raw: float | None = None
    by: int = 0


@dataclass(eq=False, slots=True)
class PassEntry:
    """What the hooks log of one backward pass into one parameter (read into a ``"pass"``
    :class:`Note` once the pass accumulated).

    ``param``: the parameter; ``grad``: norm of the pass's own gradient; ``held``: norm of
    ``.grad`` before it (``None``: None); ``sparse``: a sparse gradient; ``after``: norm of
    ``.grad`` after the accumulation (``None``: not read); ``forward``: calls of the model
    started by then; ``accumulated``: the post-accumulate-grad hook saw it land in ``.grad``.
    """

    param: Any
    grad: float
    held: float | None
    sparse: bool
    after: float | None
    forward: int
    accumulated: bool = False


@dataclass(eq=False, slots=True)
class HookedPass(PassEntry):
    """A :class:`PassEntry` of a parameter with hooks of the user's: ``raw`` is the norm of
    the gradient before them (``grad``: after them)."""

    raw: float | None = None


class StepEntry(NamedTuple):
    """An optimizer step began: the watched parameters it holds (``held``), whether each one's
    ``.grad`` was None (``none``), the norms read (``norms``: parameter -> norm, ``None``: none
    read), the calls of the model started by then (``forward``), the optimizer's class
    name (``optimizer``) and its ``id`` (``by``)."""

    held: list[Any]
    none: list[bool]
    norms: dict[Any, float] | None
    forward: int
    optimizer: str = ""
    by: int = 0


class ScaleEntry(NamedTuple):
    """A ``backward()`` call whose loss scale differs from the last one's: the passes that
    follow come from losses multiplied by ``scale`` (a ``GradScaler``'s ``scale``; 1: not
    scaled; ``None``: not known), from call ``forward`` of the model on."""

    scale: float | None
    forward: int


class UnscaleEntry(NamedTuple):
    """A ``GradScaler``'s ``unscale_(optimizer)`` ran: the watched parameters the optimizer
    holds (``held``), the factor it multiplied their ``.grad`` by (``factor``: 1 / scale) and
    the calls of the model started by then (``forward``)."""

    held: list[Any]
    factor: float
    forward: int


class EndEntry(NamedTuple):
    """The block ended: ``final`` (parameter -> norm of ``.grad``, ``None`` when None) and the
    calls of the model started by then (``forward``)."""

    final: dict[Any, float | None]
    forward: int


class Replacement(NamedTuple):
    """A registered parameter whose module attribute was assigned a new ``nn.Parameter``.

    ``name`` is the parameter's full name when the watch began, ``module`` its module's name,
    ``kind`` its class name and ``attribute`` the attribute's name; ``inside`` the name and
    class of the innermost watched module call running when the assignment ran (``None``:
    none, the assignment ran outside the model's forward); ``forward``: calls of the watched
    model started by then (1 is the first); ``count``: how many times it was observed.
    """

    name: str
    module: str
    kind: str
    attribute: str
    inside: tuple[str, str] | None
    forward: int
    count: int = 1  # type: ignore[assignment]  # a field named like tuple.count


Entry = PassEntry | UnscaleEntry | StepEntry | EndEntry | ScaleEntry  # what the hooks log


def _empty(held: float | None) -> bool:
    return held is None or held == 0.0


def chain(notes: Sequence[Note]) -> list[Note]:
    """The passes whose sum ``.grad`` held after the last pass, in order: back from the last
    pass to the latest one that found ``.grad`` None, or zero where the pass before left it
    nonzero (or to the first one noted)."""
    passes = [n for n in notes if n.kind == "pass"]
    for i in range(len(passes) - 1, -1, -1):
        n = passes[i]
        # a .grad of zeros after a pass that left zeros (a gradient exactly zero) is that
        # pass's, not a zero_grad(set_to_none=False): the sum goes on
        if n.held is None or (n.held == 0.0 and not (i and passes[i - 1].after == 0.0)):
            return passes[i:]
    return passes


class Accumulation(NamedTuple):
    """What the passes of :func:`chain` were.

    ``passes``: how many; ``forwards``: how many distinct forwards they followed;
    ``kind``: ``"one"`` (a single pass into an empty ``.grad``), ``"held"`` (the first pass
    found ``.grad`` already holding a gradient from before the block), ``"steps"`` (an
    optimizer step, or a change of the parameters, came between two of them: a missing
    ``zero_grad``), ``"same-forward"`` (several passes, no forward of the model between them),
    ``"micro-batches"`` (each pass after its own forward, the parameters unchanged in between,
    ``.grad`` empty before the first), ``"mixed"`` (own forwards and shared ones) or ``"cut"``
    (the first pass kept found ``.grad`` holding a gradient, and earlier notes were not kept:
    more passes than ``events.KEPT`` notes, not known to be from before the block);
    ``same``: every pass computed the same gradient (equal norms, and the sum's norm is their
    sum: parallel vectors of equal length); ``first_held``: what the first pass found.
    """

    passes: int
    forwards: int
    kind: str
    same: bool
    first_held: float | None


def accumulation(notes: Sequence[Note], moved: dict[int, float] | None = None,
                 steps: Iterable[int] = ()) -> Accumulation:
    """Read :func:`chain` of ``notes``; ``moved`` maps a forward count to a reading of the
    parameters taken at that forward (a parameter's sum): a different reading at two passes'
    forwards means an update ran between them, by hand when no optimizer step ran there
    (``steps``: the forward counts at which steps began; another optimizer's step may have
    moved the reading, so those intervals are left to the steps' own notes)."""
    steps = frozenset(steps)
    c = chain(notes)
    if not c:
        return Accumulation(0, 0, "one", True, None)
    first = c[0]
    forwards = len({n.forward for n in c})
    grads = [n.grad for n in c]
    same = (len(c) > 1 and all(g is not None and math.isfinite(g) for g in grads)
            and max(grads) <= min(grads) * (1 + _REL)  # type: ignore[type-var,operator]
            and c[-1].after is not None and math.isclose(
                c[-1].after, len(c) * float(grads[0]), rel_tol=1e-4))  # type: ignore[arg-type]
    cut = notes[0].kind == "cut" and first is next(n for n in notes if n.kind == "pass")
    if not _empty(first.held) and cut:
        kind = "cut"  # passes before the first kept one: whether .grad was empty is not known
    elif not _empty(first.held):
        kind = "held"
    elif len(c) == 1:
        kind = "one"
    else:
        kinds = set()
        for a, b in pairwise(c):
            if b.step > a.step or (_moved(moved, a.forward, b.forward)
                                   and not any(a.forward <= s < b.forward for s in steps)):
                kinds.add("steps")
            elif b.forward == a.forward:
                kinds.add("same-forward")
            else:
                kinds.add("micro-batches")
        kind = ("steps" if "steps" in kinds else kinds.pop() if len(kinds) == 1 else "mixed")
    return Accumulation(len(c), forwards, kind, same, first.held)


def _moved(moved: dict[int, float] | None, a: int, b: int) -> bool:
    if not moved or a == b or a not in moved or b not in moved:
        return False
    x, y = moved[a], moved[b]
    return not (x == y or (math.isnan(x) and math.isnan(y)))


def step_forwards(log: Sequence[Entry]) -> frozenset[int]:
    """The forward counts at which the optimizer steps of ``log`` began."""
    return frozenset(e.forward for e in log if isinstance(e, StepEntry))


class AfterBackward(NamedTuple):
    """What happened to ``.grad`` between the last pass and the next observation.

    ``when``: ``"step"`` (an optimizer step began), ``"end"`` (the block ended) or ``None``
    (nothing observed since: the block has not ended); ``change``: ``"kept"``, ``"reset"``
    (None), ``"zeroed"``, ``"scaled"`` (``factor`` = the ratio of the two norms) or
    ``"unknown"`` (not comparable: a NaN norm, a pass whose result was not read);
    ``after``: the norm right after the pass; ``seen``: the norm then.  ``unscale``: the
    factor of the ``GradScaler`` ``unscale_`` calls observed in between (``None``: none);
    the change is then read against the pass's norm times that factor, and is
    ``"unscaled"`` (``factor`` = ``unscale``) when ``unscale_`` alone explains it.
    """

    when: str | None
    change: str
    factor: float | None = None
    after: float | None = None
    seen: float | None = None
    unscale: float | None = None


def after_backward(notes: Sequence[Note]) -> AfterBackward:
    """Compare ``.grad`` right after the last pass with the first step that followed it, or
    with the end of the block when no step did; a ``GradScaler``'s ``unscale_`` observed in
    between is accounted for (its factor)."""
    last = max((i for i, n in enumerate(notes) if n.kind == "pass"), default=None)
    if last is None:
        return AfterBackward(None, "unknown")
    p = notes[last]
    later = notes[last + 1:]
    o = next((n for n in later if n.kind == "step"), None)
    if o is None:
        o = next((n for n in later if n.kind == "end"), None)
    before = later if o is None else later[: later.index(o)]
    u = None
    for n in before:
        if n.kind == "unscale" and n.factor is not None:
            u = n.factor if u is None else u * n.factor
    if o is None:
        return AfterBackward(None, "unknown", after=p.after, unscale=u)
    if o.held is None:
        return AfterBackward(o.kind, "reset", after=p.after, unscale=u)
    if not o.measured:  # the step's reading of a smaller parameter showed no other change
        if u is not None:
            return AfterBackward(o.kind, "unscaled", u, p.after, None, u)
        return AfterBackward(o.kind, "kept", 1.0, p.after, p.after)
    a, s = p.after, o.held
    if a is None or not (math.isfinite(a) and math.isfinite(s)):
        return AfterBackward(o.kind, "unknown", after=a, seen=s, unscale=u)
    if s == 0.0 and a != 0.0:
        return AfterBackward(o.kind, "zeroed", 0.0, a, s, u)
    if a == 0.0:
        return AfterBackward(o.kind, "kept" if s == 0.0 else "unknown", None, a, s, u)
    factor = s / (a if u is None else a * u)
    if abs(factor - 1) <= _REL:
        if u is not None:
            return AfterBackward(o.kind, "unscaled", u, a, s, u)
        return AfterBackward(o.kind, "kept", 1.0, a, s)
    return AfterBackward(o.kind, "scaled", factor, a, s, u)


def read_log(log: Sequence[Any]) -> dict[Any, list[Note]]:
    """A watch's log of ``.grad`` events (:class:`PassEntry`, :class:`UnscaleEntry`,
    :class:`StepEntry`, :class:`EndEntry`, in order) as :class:`Note` lists, one per parameter
    (the latest ``events.KEPT``)."""
    notes: dict[Any, list[Note]] = {}
    steps: dict[Any, int] = {}
    nan = float("nan")
    scale: float | None = 1.0

    def add(p: Any, note: Note) -> None:
        got = notes.get(p)
        if got is None:
            got = notes[p] = []
        got.append(note)

    for e in log:
        if isinstance(e, PassEntry):
            if e.accumulated:
                add(e.param, Note("pass", e.grad, e.held, e.after, e.forward,
                                  steps.get(e.param, 0), scale=scale,
                                  raw=e.raw if isinstance(e, HookedPass) else None))
        elif isinstance(e, ScaleEntry):
            scale = e.scale
        elif isinstance(e, UnscaleEntry):
            for p in e.held:
                add(p, Note("unscale", None, None, None, e.forward, steps.get(p, 0),
                            factor=e.factor))
        elif isinstance(e, StepEntry):
            for p, is_none in zip(e.held, e.none, strict=True):
                steps[p] = steps.get(p, 0) + 1
                if is_none:
                    add(p, Note("step", None, None, None, e.forward, steps[p], by=e.by))
                elif e.norms is not None and p in e.norms:
                    add(p, Note("step", None, e.norms[p], None, e.forward, steps[p], by=e.by))
                else:
                    add(p, Note("step", None, nan, None, e.forward, steps[p],
                                measured=False, by=e.by))
        elif isinstance(e, EndEntry):  # the end
            for p in notes:
                add(p, Note("end", None, e.final.get(p), None, e.forward, steps.get(p, 0)))
    # a list cut to the latest KEPT starts with a "cut" note: its first pass is not the block's
    return {p: n if len(n) <= KEPT else [Note("cut", None, None, None, n[-KEPT + 1].forward,
                                              n[-KEPT + 1].step), *n[-KEPT + 1:]]
            for p, n in notes.items()}


class ScaleRead(NamedTuple):
    """What one optimizer step (or the end of the block, when no step came after the last
    pass) read of a parameter's ``.grad``, against the gradients of the losses behind it.

    ``when``: ``"step"`` or ``"end"``; ``forward``: calls of the model started by then;
    ``scales``: the loss scale of each pass ``.grad`` sums (:attr:`Note.scale`);
    ``factors``: what ``.grad`` held of each pass's loss gradient: its scale times the
    ``unscale_`` factors observed after it (``None``: not known); ``unscale``: the product of
    the ``unscale_`` factors observed between the last pass and the read (``None``: none);
    ``edit``: ``.grad``'s norm at the read over what the last pass and those ``unscale_``
    calls left (1: the step's reading showed no other change; ``None``: not compared);
    ``by``: ``id`` of the optimizer (0 at the end).
    """

    when: str
    forward: int
    scales: tuple[float | None, ...]
    factors: tuple[float | None, ...]
    unscale: float | None
    edit: float | None
    by: int


def scale_reads(notes: Sequence[Note]) -> list[ScaleRead]:
    """Every read of ``.grad`` in ``notes`` (each optimizer step that found it present and
    nonzero, and the end of the block when no step came after the last pass), with the
    passes it summed and what each pass's loss gradient was multiplied by (:class:`ScaleRead`).
    The passes ``.grad`` sums restart as :func:`chain` does; a first pass that found
    ``.grad`` holding a gradient from before counts that gradient as of unknown scale."""
    out: list[ScaleRead] = []
    terms: list[list[float | None]] = []  # per pass of the sum: [its loss scale, its factor]
    last_after: float | None = None
    since: float | None = None  # unscale_ factors since the last pass
    read = passed = False  # a step read .grad since the last pass; a pass was seen
    for n in notes:
        if n.kind == "pass":
            # a .grad of zeros after a pass that left zeros is that pass's: the sum goes on
            if n.held is None or (n.held == 0.0 and not (passed and last_after == 0.0)):
                terms = []
            elif not terms:  # a gradient from before the notes: its scale is not known
                terms = [[None, None]]
            terms.append([n.scale, n.scale])
            last_after, since, read, passed = n.after, None, False, True
        elif n.kind == "unscale" and n.factor is not None:
            for t in terms:
                t[1] = None if t[1] is None else t[1] * n.factor
            since = n.factor if since is None else since * n.factor
        elif n.kind in ("step", "end") and not (n.kind == "end" and read):
            if n.held is None or n.held == 0.0 or not terms:
                continue  # reset or zeroed before the read: nothing of the passes was read
            edit: float | None = None
            if not n.measured:
                edit = 1.0
            elif last_after and math.isfinite(last_after) and math.isfinite(n.held):
                edit = n.held / (last_after * (1.0 if since is None else since))
            out.append(ScaleRead(n.kind, n.forward, tuple(t[0] for t in terms),
                                 tuple(t[1] for t in terms), since, edit, n.by))
            read = read or n.kind == "step"
    return out
