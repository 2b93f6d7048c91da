"""A grid of model families × bug kinds, each kind also in its healthy variant: what ``watch``
and ``why_no_grad`` must name, and what they must never say, on each cell (issue 37).

The cells are generated: every family of ``grid_models.FAMILIES`` × every kind of
:data:`KINDS` × (bug, healthy); a kind that does not apply to a family is skipped with the
reason.  Each cell builds its model small, runs one ordinary training step inside
``with gradarg.watch(model) as w:`` (``zero_grad``, forward, ``backward``, ``step``, with the
bug's own edit of that sequence) and reads the texts about the parameter the bug concerns (its
*target*):

- ``summary``: ``w.summary(checks=False)`` after the block (the findings and notes, without
  the list of checks that ran);
- ``watch``: ``w.why_no_grad(target)`` after the block; ``watch_now``: the same question about
  the parameter the model holds under the target's name when the step ended, where that is
  another tensor (a parameter re-created in ``forward``);
- ``before``: ``gradarg.why_no_grad(loss, target, module=model)`` on the same model and
  step, before the user's ``backward()`` (a fresh build, outside any watch);
- ``after``: the same question after the block, on the step's own loss.

What must be named comes from the bug planted: the target's name (written ``⟨T⟩`` in the
patterns: every text has the target's name replaced by it), the module where it is planted, the
zero operand (``⟨Z⟩``), the word for the cause, a figure recomputed here (the clipping factor).
What must never be said: the causes of the other kinds (:data:`CLAIMS`), unless the bug planted
makes them true (``Kind.allow``); a healthy cell says "ok" and names no cause.
``gradarg.why_no_grad`` lists the possible causes of a cut path ("cut by .detach(), .data, ...
or torch.no_grad()"), and a graph cannot tell a ``.detach()`` from a ``no_grad`` block, so its
texts are held to fewer claims (:data:`NEVER`) and, for those two kinds, to naming the module
whose output was cut and the cause among the ones listed.

Each cell first checks its plant (:data:`PLANTED`: what the bug leaves in the target's
``.grad``, recomputed for two passes), so a cell cannot pass or fail for a bug that was not
there.  Cells that state something false today are in :data:`XFAIL` (issue 37): strict, and
expected to fail only by their texts (:class:`DiagnosisWrong`), never by a crash; a fix makes
them pass (XPASS, a failure under ``strict``), and the line goes.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import pytest
import torch
from grid_models import FAMILIES, Family, per_example
from torch import nn

import gradarg

VIEWS = ("summary", "watch", "watch_now", "before", "after")

# each cause, as a text claims it; matched case-sensitively
CLAIMS: dict[str, str] = {
    "vanishing": r"vanishing|exploding",
    "dead": r"\bdead\b",
    "nonfinite": r"NaN|non-finite|\bInf\b",
    "clip": r"clip",
    "frozen": r"\bfrozen\b|requires_grad=False",
    "no_grad": r"no_grad",
    "detach": r"detach",
    "inplace": r"in.?place",
    "reset": r"zero_grad|\breset\b|cleared",
    "accumulated": r"accumulat|\b\d+ (backward )?passes|\btwice\b",
    "unused": r"\bunused\b|never called|not used|uses it",
    "zero": r"exactly zero|all-zero|all zeros|(?<!non)zero gradient",
    "recreated": r"re-?created|replaced|reassigned",
    "checkpoint": r"checkpoint",
    # the watch's assertion (it saw the block run without a graph); why_no_grad, which sees
    # only the graph left behind, may list a reentrant checkpoint beside torch.no_grad() as
    # a hedge (the two leave the same graph) but never assert it
    "checkpoint_claim": r"ran inside torch\.utils\.checkpoint with use_reentrant=True, which",
    "no_gradient": r"no gradient",
    "frozen_word": r"\bfrozen\b",  # before/after: there "requires_grad=False" is also a hedge
}
# the claims each view must not make unless the kind allows them: the watch's texts assert,
# gradarg.why_no_grad's list the possible causes of a cut path or a None .grad (hedges)
NEVER: dict[str, frozenset[str]] = {
    "summary": frozenset(CLAIMS),
    "watch": frozenset(CLAIMS),
    "watch_now": frozenset(CLAIMS),
    "before": frozenset({"vanishing", "dead", "nonfinite", "clip", "inplace", "recreated",
                         "zero", "checkpoint_claim", "frozen_word"}),
    "after": frozenset({"vanishing", "dead", "nonfinite", "clip", "inplace", "recreated",
                        "zero", "checkpoint_claim", "frozen_word"}),
}

HEALTHY_MUST = {
    "summary": (r"^gradients ok\b",),
    "watch": (r"⟨T⟩",),
    "watch_now": (r"⟨T⟩",),
    "before": (r"⟨T⟩",),  # names the parameter asked about (not the tool's own wording)
    "after": (r"⟨T⟩",),
}
FACTOR = "<the clipping factor>"  # a number in the text equal to the factor recomputed here
REC = r"re-?created|replaced|reassigned|new (nn\.)?Parameter|no longer|not the (same|one)"


@dataclass(frozen=True)
class Kind:
    """A bug kind: where its target is, what each view must match and must not (beyond
    :data:`NEVER` less ``allow``), and to which families it applies."""

    name: str
    target: str = "site.lin.weight"  # "own": the family's own parameter
    allow: frozenset[str] = frozenset()
    must: dict[str, tuple[str, ...]] = field(default_factory=dict)
    never: dict[str, tuple[str, ...]] = field(default_factory=dict)
    ok_allowed: bool = False  # the bug's summary may start with "ok" (it names the bug after)
    skip: dict[str, str] = field(default_factory=dict)  # family -> why the kind does not apply
    only: str | None = None  # the kind applies only to families with this attribute set

    def target_of(self, family: Family) -> str:
        if self.name == "zero_factor" and family.zero is not None:
            return family.zero[0]
        return family.own if self.target == "own" else self.target


# an operation named as such, not in a list of examples ("sqrt at 0, log of 0, division by 0")
_SQRT = r"SqrtBackward|\bsqrt\b(?! at 0)"
_DIV = r"DivBackward|\bdiv\b"
_RELU = r"ReluBackward|\brelu\b|dead ReLU"
_NOT_IN_GRAPH = r"not in .{0,30}graph|not reachable|unused|not used|did not take part"
_NO_PASS = r"no backward|not reach|never reached|raised|error"
# the error torch raised, or the edit that caused it (not only "no backward pass reached")
_THE_ERROR = r"in.?place|modified by|RuntimeError"
_NAN_NOT_THE_LOSS = (r"follows the model|outside the model|loss[^;]{0,40}made",)

KINDS: dict[str, Kind] = {k.name: k for k in (
    Kind("frozen", target="own", allow=frozenset({"frozen", "frozen_word", "no_gradient"}),
         ok_allowed=True,
         must={"summary": (r"⟨T⟩", r"frozen|requires_grad=False"),
               "watch": (r"frozen|requires_grad=False",),
               "before": (r"requires_grad=False|does not require grad|frozen",),
               "after": (r"requires_grad=False|does not require grad|frozen",)}),
    Kind("clip", target="own", allow=frozenset({"clip"}),
         must={"summary": (r"clip", FACTOR), "watch": (r"clip", FACTOR),
               "before": (r"⟨T⟩",)}),
    Kind("reset_before_step", target="own", allow=frozenset({"reset"}),
         must={"summary": (r"zero_grad|reset|cleared",),
               "watch": (r"zero_grad|reset|cleared",),
               "before": (r"⟨T⟩",), "after": (r"zero_grad|reset",)}),
    Kind("two_passes", target="own", allow=frozenset({"accumulated"}),
         must={"summary": (r"\b(2|two)\b[^;]{0,30}\bpass|\btwice\b",),
               "watch": (r"\b(2|two)\b[^;]{0,30}\bpass|\btwice\b",),
               "before": (r"⟨T⟩",)}),
    Kind("detach", allow=frozenset({"detach", "no_gradient"}),
         must={"summary": (r"'site\.lin'", r"detach"), "watch": (r"detach",),
               "before": (r"site\.lin\b", r"detach"), "after": (r"site\.lin\b", r"detach")}),
    Kind("no_grad", allow=frozenset({"no_grad", "no_gradient"}),
         must={"summary": (r"'site\.lin'", r"no_grad"), "watch": (r"no_grad",),
               "before": (r"site\.lin\b", r"no_grad"), "after": (r"site\.lin\b", r"no_grad")}),
    Kind("inplace", allow=frozenset({"inplace", "no_gradient"}),
         must={"summary": (r"in.?place",), "watch": (r"in.?place",),
               "before": (r"in.?place", r"(?i)sigmoid"), "after": (r"in.?place", r"(?i)sigmoid")},
         never={"after": (CLAIMS["reset"],)},
         skip={"checkpointed": "under non-reentrant checkpoint the saved tensors are "
                               "recomputed in backward, so torch raises no error"}),
    # the backward raises in the loss, before it reaches the model: the watch sees no pass
    Kind("inplace_loss", target="own", allow=frozenset({"inplace", "no_gradient"}),
         must={"summary": (_NO_PASS, _THE_ERROR), "watch": (_NO_PASS, _THE_ERROR),
               "before": (r"in.?place", r"(?i)sigmoid"), "after": (r"in.?place", r"(?i)sigmoid")},
         never={"after": (CLAIMS["reset"],)}),
    Kind("dead", allow=frozenset({"dead", "zero"}),
         must={"summary": (r"dead", r"site\.act"), "watch": (r"site\.act", r"dead|ReLU"),
               "before": (_RELU,), "after": (_RELU,)}),
    Kind("nan_forward", allow=frozenset({"nonfinite"}),
         must={"summary": (r"NaN|non-finite", r"'site(\.\w+)*'"),
               "watch": (r"NaN|non-finite",),
               "before": (_SQRT,), "after": (_SQRT,)},
         never={"summary": _NAN_NOT_THE_LOSS, "watch": _NAN_NOT_THE_LOSS}),
    Kind("nan_where", allow=frozenset({"nonfinite"}),
         must={"summary": (r"NaN|non-finite", r"'site(\.\w+)*'"),
               "watch": (r"NaN|non-finite",),
               "before": (r"where",), "after": (r"where",)},
         never={"summary": _NAN_NOT_THE_LOSS, "watch": _NAN_NOT_THE_LOSS}),
    Kind("nan_loss", target="own", allow=frozenset({"nonfinite"}),
         must={"summary": (r"NaN|non-finite", r"loss"), "watch": (r"NaN|non-finite",),
               "before": (_DIV,), "after": (_DIV,)},
         never={"summary": (r"'site",)}),
    Kind("unused", target="site.extra.weight", allow=frozenset({"unused", "no_gradient"}),
         must={"summary": (r"site\.extra|⟨T⟩", r"unused|not used|uses it|no gradient"),
               "watch": (r"unused|not used|uses it",),
               "before": (_NOT_IN_GRAPH,), "after": (_NOT_IN_GRAPH,)}),
    Kind("recreated", target="site.scale", allow=frozenset({"recreated", "no_gradient"}),
         must={"summary": (r"⟨T⟩", REC), "watch": (REC,), "watch_now": (REC,),
               "before": (REC,), "after": (REC,)}),
    Kind("zero_factor", allow=frozenset({"zero"}),
         must={"summary": (r"⟨Z⟩", r"zero"), "watch": (r"⟨Z⟩",), "before": (r"⟨Z⟩",),
               "after": (r"⟨Z⟩",)}),
    Kind("reentrant", target="first.lin.weight",
         allow=frozenset({"checkpoint", "checkpoint_claim", "no_grad", "no_gradient"}),
         must={"summary": (r"checkpoint", r"use_reentrant|requires.grad"),
               "watch": (r"checkpoint",),
               "before": (r"checkpoint",), "after": (r"checkpoint",)},
         never={"summary": (r"no_grad\(\) around",), "watch": (r"no_grad\(\) around",)},
         only="checkpointed"),
)}

# what the bug leaves in the target's .grad at the end of its step (checked: the plant works);
# every healthy variant leaves a finite, nonzero .grad
PLANTED: dict[str, str] = {
    "frozen": "none", "clip": "ok", "reset_before_step": "none", "two_passes": "twice",
    "detach": "none", "no_grad": "none", "inplace": "none", "inplace_loss": "none",
    "dead": "zero", "nan_forward": "nonfinite", "nan_where": "nonfinite", "nan_loss": "nonfinite",
    "unused": "none", "recreated": "none", "zero_factor": "zero", "reentrant": "none",
}

# cells that state something false or too vague to tell the bug from its neighbours
# (family, kind, "bug" | "ok") -> reason; strict, so a fix shows as XPASS until its line goes
XFAIL: dict[tuple[str, str, str], str] = {
}


# -- the step -----------------------------------------------------------------------------


def loss_of(family: Family, model: nn.Module, kind: str, bug: bool, x, y) -> torch.Tensor:
    """The loss of a batch: a mean over examples; for ``nan_loss`` a masked mean whose mask
    is empty (``0 / 0``: the bug) or holds every other example; for ``inplace_loss`` a score
    to maximise, the mean sigmoid of the logits with class 0 left out, by an in-place write
    into sigmoid's output (which its backward needs: the bug) or by a product."""
    if kind == "inplace_loss":
        scores = torch.sigmoid(model(x))
        if bug:
            scores[..., 0] = 0.0
        else:
            keep = torch.ones(scores.shape[-1])
            keep[0] = 0.0
            scores = scores * keep
        return -scores.mean()
    per = per_example(model, x, y)
    if kind != "nan_loss":
        return per.mean()
    mask = torch.zeros_like(per) if bug else (torch.arange(per.numel()) % 2 == 0).to(per)
    return (per * mask).sum() / mask.sum()


def build(family: Family, kind: str, bug: bool) -> nn.Module:
    model = family.build(kind, bug)
    if kind == "frozen" and bug:
        model.get_parameter(family.own).requires_grad_(False)  # by mistake
    return model


def forward(family: Family, model: nn.Module, kind: str, bug: bool, x, y) -> torch.Tensor:
    if kind == "reentrant" and bug:
        with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
            return loss_of(family, model, kind, bug, x, y)
    return loss_of(family, model, kind, bug, x, y)


@dataclass
class Cell:
    texts: dict[str, str]
    target: str
    grad: torch.Tensor | None  # the target's .grad when the step ended
    factor: float | None = None  # clip: the factor clip_grad_norm_ applied
    one_pass: torch.Tensor | None = None  # two_passes: what one backward pass gives


def run(family: Family, kind: Kind, bug: bool) -> Cell:
    k = kind.name
    target = kind.target_of(family)
    x, y = family.batch()

    # before: the same model and forward, asked before any backward
    model = build(family, k, bug)
    param = model.get_parameter(target)
    loss = forward(family, model, k, bug, x, y)
    before = str(gradarg.why_no_grad(loss, param, module=model))

    # the user's step, watched
    model = build(family, k, bug)
    param = model.get_parameter(target)  # recreated: the one the optimizer holds
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    factor = None
    with gradarg.watch(model) as w:
        opt.zero_grad()
        if k == "two_passes" and not bug:  # gradient accumulation over two micro-batches
            half = x.shape[0] // 2
            for xs, ys in ((x[:half], y[:half]), (x[half:], y[half:])):
                loss = forward(family, model, k, bug, xs, ys) / 2
                loss.backward()
        else:
            loss = forward(family, model, k, bug, x, y)
        if k in ("inplace", "inplace_loss") and bug:
            with pytest.raises(RuntimeError, match="modified by an inplace operation"):
                loss.backward()
        elif k == "two_passes" and bug:
            loss.backward(retain_graph=True)
            loss.backward()
        elif k == "reset_before_step" and bug:
            loss.backward()
            opt.zero_grad()  # .grad is None: the step below does nothing
        elif not (k == "two_passes" and not bug):
            loss.backward()
        if k == "clip":
            trainable = [p for p in model.parameters() if p.requires_grad]
            max_norm = 0.01 if bug else 1e6
            total = float(torch.nn.utils.clip_grad_norm_(trainable, max_norm))
            factor = max_norm / (total + 1e-6)
            assert (factor < 0.5) == bug  # the plant: clipping acts only in the bug
        if not (k in ("inplace", "inplace_loss") and bug):
            opt.step()
    grad = None if param.grad is None else param.grad.detach().clone()
    one_pass = None
    if k == "two_passes" and bug:  # one pass of the same step, on a fresh build
        fresh = build(family, k, bug)
        (one_pass,) = torch.autograd.grad(forward(family, fresh, k, bug, x, y),
                                          fresh.get_parameter(target))
    texts = {
        "summary": w.summary(checks=False),
        "watch": w.why_no_grad(param),
        "before": before,
        "after": str(gradarg.why_no_grad(loss, param, module=model)),
    }
    now = model.get_parameter(target)
    if now is not param:  # recreated: the parameter the model holds now, asked about by name
        try:
            texts["watch_now"] = w.why_no_grad(now)
        except KeyError as err:  # a parameter of the model, though not when the watch began
            texts["watch_now"] = f"KeyError: {err}"
    return Cell(texts, target, grad, factor, one_pass)


# -- the checks ---------------------------------------------------------------------------


def _numbers(text: str) -> list[float]:
    return [float(m) for m in re.findall(r"(?<![\w.])\d+(?:\.\d+)?(?:e[-+]?\d+)?", text)]


def planted(kind: Kind, bug: bool, cell: Cell) -> str | None:
    """What is wrong with the plant itself: the target's .grad is not what the bug (or its
    healthy variant) leaves there; ``None`` when it is."""
    state = PLANTED[kind.name] if bug else "ok"
    g = cell.grad
    if state == "none":
        return None if g is None else f".grad should be None, holds norm {float(g.norm()):.4g}"
    if g is None:
        return f".grad is None, expected {state}"
    finite = bool(torch.isfinite(g).all())
    if state == "nonfinite":
        return None if not finite else ".grad should hold NaN/Inf"
    if not finite:
        return f".grad holds NaN/Inf, expected {state}"
    if state == "zero":
        return None if not g.any() else ".grad should be exactly zero"
    if state == "twice":
        assert cell.one_pass is not None
        ok = torch.allclose(g, 2 * cell.one_pass, rtol=1e-5, atol=1e-8)
        return None if ok else ".grad should be twice one pass"
    return None if g.any() else ".grad should be nonzero"


def violations(family: Family, kind: Kind, bug: bool, cell: Cell) -> list[str]:
    out = []
    zero = family.zero[1] if (kind.name == "zero_factor" and family.zero) else r"site\.gate"
    for view in VIEWS:
        if view not in cell.texts:
            continue
        text = cell.texts[view].replace(cell.target, "⟨T⟩")
        if bug:
            must = kind.must.get(view, ())
            never = NEVER[view] - kind.allow
            extra = kind.never.get(view, ())
            if view == "summary" and not kind.ok_allowed:
                extra = (*extra, r"^(gradients )?ok\b")
        else:
            must = HEALTHY_MUST[view]
            allowed = set()
            if view == "summary" and kind.name == "two_passes":
                allowed.add("accumulated")  # the note on the declared micro-batches
            never, extra = NEVER[view] - allowed, ()
        if view == "summary" and family.frozen_by_design:
            never = never - {"frozen", "frozen_word"}  # named as frozen, on purpose
        if family.zero_by_design and view in ("summary", "watch"):
            never = never - {"zero"}  # a gradient exactly zero by design, said as a note
            if not bug and view == "summary":
                must = (*must, family.zero_by_design)  # ... and that note is there
        for pattern in must:
            if pattern == FACTOR:
                f = cell.factor
                if not any(math.isclose(v, f, rel_tol=6e-3) for v in _numbers(text)):
                    out.append(f"{view} must state the factor {f:.4g}: {text}")
                continue
            if not re.search(pattern.replace("⟨Z⟩", zero), text):
                out.append(f"{view} must match {pattern!r}: {text}")
        for claim in sorted(never):
            if re.search(CLAIMS[claim], text):
                out.append(f"{view} must not claim {claim} ({CLAIMS[claim]!r}): {text}")
        for pattern in extra:
            if re.search(pattern, text):
                out.append(f"{view} must not match {pattern!r}: {text}")
    return out


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    """The models are tiny: one intra-op thread is fastest, and on a busy machine a second
    one spins (the grid took 1.6 min wall instead of 20 s on two loaded cores)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


class DiagnosisWrong(AssertionError):
    """A cell's texts fail its patterns (what an XFAIL line expects; a crash or a plant that
    does not work fails the cell even when it is in :data:`XFAIL`)."""


def _cells():
    for fname in FAMILIES:
        for kname in KINDS:
            for variant in ("bug", "ok"):
                marks = []
                reason = XFAIL.get((fname, kname, variant))
                if reason is not None:  # fails only by what the texts say, never by a crash
                    marks.append(pytest.mark.xfail(strict=True, reason=reason,
                                                   raises=DiagnosisWrong))
                yield pytest.param(fname, kname, variant, marks=marks,
                                   id=f"{fname}-{kname}-{variant}")


@pytest.mark.parametrize(("family", "kind", "variant"), list(_cells()))
def test_cell(family, kind, variant):
    fam, knd = FAMILIES[family], KINDS[kind]
    if knd.only is not None and not getattr(fam, knd.only):
        pytest.skip(f"{kind} needs a family with {knd.only} blocks; {family} has none")
    if family in knd.skip:
        pytest.skip(knd.skip[family])
    if family == "gpt2":
        pytest.importorskip("transformers")
    cell = run(fam, knd, variant == "bug")  # warnings are errors (pyproject's filterwarnings)
    wrong_plant = planted(knd, variant == "bug", cell)
    assert wrong_plant is None, f"the plant of {kind} ({variant}) does not work: {wrong_plant}"
    problems = violations(fam, knd, variant == "bug", cell)
    if problems:
        raise DiagnosisWrong("\n".join(problems))


def test_the_grid_is_large_enough():
    assert len(FAMILIES) >= 8 and len(KINDS) >= 12
    assert len(list(_cells())) >= 100


def test_every_kind_says_what_its_bug_leaves_in_grad():
    assert set(PLANTED) == set(KINDS)


def xfail_problems(table: dict[tuple[str, str, str], str]) -> list[str]:
    """Lines of an XFAIL table that name no cell of the grid or give no issue as reason."""
    cells = {(f, k, v) for f in FAMILIES for k in KINDS for v in ("bug", "ok")}
    return ([f"{key}: not a cell of the grid" for key in table if key not in cells]
            + [f"{key}: reason without 'issue N: '" for key, r in table.items()
               if not re.match(r"issue \d+: \S", r)])


def test_every_xfail_line_names_a_cell_of_the_grid():
    # empty since every cell is right (the next test shows the check catches a wrong line)
    assert xfail_problems(XFAIL) == []


def test_a_wrong_xfail_line_is_caught():
    assert xfail_problems({("mlp", "detach", "bug"): "issue 43: vague"}) == []
    assert xfail_problems({("mlp", "no_such_kind", "bug"): "issue 43: x"}) != []
    assert xfail_problems({("no_such_family", "detach", "bug"): "issue 43: x"}) != []
    assert xfail_problems({("mlp", "detach", "buggy"): "issue 43: x"}) != []
    assert xfail_problems({("mlp", "detach", "bug"): "vague, no issue"}) != []
