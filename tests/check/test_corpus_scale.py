"""check_backward at real sizes (32-64 x 128-512), float32 and float64, on ten custom Functions
with their right backward and two realistic bugs each (tests/check/scale_corpus.py).

Which backward is wrong is known by construction; every wrong entry the checker names is
verified against the true Jacobian entry computed independently: a forward-mode product of the
*forward* formulas (torch.func.jvp, never the backward under test), or, for the
straight-through estimators, the intended backward.
"""

from __future__ import annotations

import pytest
import torch
from scale_corpus import F32, F64, FUNCTIONS, cases

import gradarg

DTYPES = [pytest.param(F64, id="float64"), pytest.param(F32, id="float32")]


def _case(name: str, b: int, n: int):
    return next(c for c in cases(b, n) if c.name == name)


def true_entry(case, args, out_index, in_name, in_index) -> float:
    """∂y[out_index]/∂in_name[in_index] from the forward alone (float64), or from the intended
    backward for a straight-through estimator."""
    import inspect

    base = case.name.split("/")[0]
    fwd = next(f for nm, f, *_ in FUNCTIONS if nm == base)
    names = list(inspect.signature(fwd).parameters)
    j = names.index(in_name)
    a64 = [a.detach().double() if a.is_floating_point() else a for a in args]
    if case.expected is not None:
        y = fwd(*a64)[0]
        v = torch.zeros_like(y)
        v[out_index] = 1
        g = case.expected(v, *a64)
        g = g[j] if isinstance(g, tuple) else g
        return float(g[in_index])
    u = torch.zeros_like(a64[j])
    u[in_index] = 1

    def f(t):
        b = list(a64)
        b[j] = t
        return fwd(*b)[0]

    _, t = torch.func.jvp(f, (a64[j],), (u,))
    return float(t[out_index])


def backward_entry(case, args, out_index, in_name, in_index) -> float:
    """The same entry from the backward under test: one VJP with a one-hot upstream gradient."""
    import inspect

    base = case.name.split("/")[0]
    fwd = next(f for nm, f, *_ in FUNCTIONS if nm == base)
    j = list(inspect.signature(fwd).parameters).index(in_name)
    leaves = [a.detach().clone().requires_grad_(a.requires_grad) for a in args]
    y = case.fn(*leaves)
    v = torch.zeros_like(y)
    v[out_index] = 1
    (g,) = torch.autograd.grad(y, leaves[j], v)
    return float(g[in_index])


def assert_named_entries_are_wrong(case, args, r) -> None:
    """Every entry the report lists as wrong is wrong by the independent reference."""
    eps = 1e-12 if args[0].dtype == F64 else 1e-6
    for p in r.wrong_pairs:
        assert p.worst, str(r)
        for e in p.worst[:2]:
            truth = true_entry(case, args, e.output_index, p.input, e.input_index)
            got = backward_entry(case, args, e.output_index, p.input, e.input_index)
            assert abs(got - e.got) <= 1e-6 * max(1.0, abs(got)), (got, e)
            assert abs(got - truth) > eps * max(1.0, abs(truth)), (p.input, e, truth)


# ------------------------------------------------------------------ the misses of the issue


@pytest.mark.parametrize("shape", [(32, 256), (64, 512)])
def test_a_float32_rmsnorm_reducing_in_bfloat16_is_caught(shape):
    case = _case("rmsnorm/bf16-reduction", *shape)
    args = case.inputs(F32)
    r = gradarg.check_backward(case.fn, *args)
    assert r.status == "wrong", str(r)
    assert [p.input for p in r.wrong_pairs] == ["x"]
    # reported as lost precision, against the forward's own float32 rounding
    assert r.wrong_pairs[0].pattern == "precision", r.summary
    assert "lower precision than the forward" in r.summary
    assert_named_entries_are_wrong(case, args, r)


def test_a_float32_layernorm_with_unbiased_variance_flags_x():
    case = _case("layernorm/unbiased-variance", 64, 512)
    args = case.inputs(F32)
    r = gradarg.check_backward(case.fn, *args)
    assert r.status == "wrong"
    wrong = {p.input for p in r.wrong_pairs}
    assert "x" in wrong and "w" in wrong, r.summary
    assert "gradients of x" not in r.summary  # never called right
    # a small systematic error, not rounding
    px = next(p for p in r.wrong_pairs if p.input == "x")
    assert px.pattern != "precision", px.sentence
    assert_named_entries_are_wrong(case, args, r)


def test_a_nearly_constant_factor_is_not_called_rounding_in_float64():
    # dy/dw = x̂ with the unbiased variance: x̂ (n-1)/n to within 1e-5 relative, not rounding
    case = _case("layernorm/unbiased-variance", 32, 128)
    r = gradarg.check_backward(case.fn, *case.inputs(F64))
    pw = next(p for p in r.wrong_pairs if p.input == "w")
    assert pw.pattern == "factor" and "0.99" in pw.sentence, pw.sentence
    ratio = (127 / 128) ** 0.5  # sqrt of the variances' ratio
    assert f"{ratio:.4f}"[:5] in pw.sentence


# ------------------------------------------------------------------ reports of a sample


def test_a_sampled_report_says_what_was_sampled_and_never_only():
    case = _case("sparsemax/wrong-scale", 32, 128)
    args = case.inputs(F64)
    r = gradarg.check_backward(case.fn, *args)
    p = r.wrong_pairs[0]
    assert p.n_checked < p.n_entries  # a sample
    assert " only" not in r.summary, r.summary
    assert f"columns sampled (of {32 * 128}" in p.sentence, p.sentence
    assert "estimated" in p.sentence
    assert_named_entries_are_wrong(case, args, r)


@pytest.mark.parametrize(("name", "kind"), [
    ("linear_gelu/transposed-weight-grad", "transposed"),
    ("decay_scan/forward-scan", "transposed")])
def test_transposition_is_recognised_on_a_sampled_block(name, kind):
    case = _case(name, 32, 128)
    args = case.inputs(F32)
    r = gradarg.check_backward(case.fn, *args)
    p = next(p for p in r.wrong_pairs if p.input == case.wrong_input)
    assert p.n_checked < p.n_entries and p.pattern == kind, p.sentence
    assert_named_entries_are_wrong(case, args, r)


# ------------------------------------------------------------------ the straight-through hint

HINT = "straight-through estimator"


@pytest.mark.parametrize("name", ["sparsemax/no-support-mask", "softmax_ce/padded-rows"])
def test_a_bug_where_the_forward_is_not_flat_gets_no_straight_through_hint(name):
    case = _case(name, 8, 64)
    r = gradarg.check_backward(case.fn, *case.inputs(F64))
    assert r.status == "wrong" and HINT not in r.summary, r.summary


def test_a_flat_forward_with_a_gradient_or_a_flipped_sign_gets_the_hint():
    ste = _case("fake_quant_ste", 8, 64)  # the right STE, checked without expected=
    r = gradarg.check_backward(ste.fn, *ste.inputs(F64))
    assert r.status == "wrong" and HINT in r.summary, r.summary
    flipped = _case("softmin/sign", 8, 64)
    r = gradarg.check_backward(flipped.fn, *flipped.inputs(F64))
    assert r.wrong_pairs[0].pattern == "sign" and HINT in r.summary


# ------------------------------------------------------------------ the whole corpus

CORPUS = cases(32, 128)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CORPUS])
def test_the_corpus_at_32x128(case, dtype):
    args = case.inputs(dtype)
    r = gradarg.check_backward(case.fn, *args, expected=case.expected)
    if not case.wrong:
        assert r.status == "agree", str(r)  # no false alarm
        return
    assert r.status == "wrong", str(r)  # no miss
    named = {p.input for p in r.wrong_pairs}
    assert case.wrong_input in named, r.summary
    if case.kind is not None:
        p = next(p for p in r.wrong_pairs if p.input == case.wrong_input)
        assert p.pattern == case.kind, p.sentence
    assert_named_entries_are_wrong(case, args, r)


def test_the_corpus_has_ten_functions_each_right_and_with_two_bugs():
    names = {c.name.split("/")[0] for c in CORPUS}
    assert len(names) >= 10
    for n in names:
        assert sum(c.wrong for c in CORPUS if c.name.split("/")[0] == n) == 2
        assert sum(not c.wrong for c in CORPUS if c.name.split("/")[0] == n) == 1
