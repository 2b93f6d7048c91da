"""check_backward at its edges (issue 36), on custom Functions built like the issue's cases
(tests/check/edge_corpus.py): what each report must say, and what it must never say.

Which backward is wrong, and where, is known by construction; every entry a report names as
wrong is checked against the true Jacobian entry from the forward formulas alone
(``edge_corpus.true_jacobian_entry``: forward mode on float64 copies, never the backward under
test).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import textwrap
from pathlib import Path

import edge_corpus as E
import pytest
import torch

import gradarg
from gradarg.check import budget, fd_error
from gradarg.check import checker as cb
from gradarg.check.localize import halving, supported

F32, F64 = torch.float32, torch.float64
HINT = "straight-through estimator"
# the cases marked slow run with GRADARG_SLOW_TESTS=1 (tests/conftest.py): a second bug, seed
# or dtype of a behaviour that CI checks at the same size once, or at a smaller size
SLOW = pytest.mark.slow
SMALL_AND_LARGE = [(8, 64, F64), pytest.param(64, 512, F32, marks=SLOW)]


@pytest.fixture
def no_full_jacobian(monkeypatch):
    """Fail if any whole Jacobian (backward rows or reference columns) is built."""

    def forbidden(*args, **kwargs):
        raise AssertionError("a whole Jacobian was built")

    monkeypatch.setattr(cb, "jacobian", forbidden)
    monkeypatch.setattr(fd_error, "partials", forbidden)


def backward_entry(fn, args, j, out_index, in_index) -> float:
    """The entry as ``y.backward(gradient=one-hot)`` gives it."""
    leaves = [a.detach().clone().requires_grad_(a.requires_grad) for a in args]
    y = fn(*leaves)
    v = torch.zeros_like(y)
    v[out_index] = 1
    (g,) = torch.autograd.grad(y, leaves[j], v)
    return float(g[in_index])


def assert_named_entries_are_wrong(fn, forward, args, r, j=0) -> None:
    """Every entry the report lists is wrong by the forward alone, and is what the backward
    gives for a one-hot upstream gradient."""
    for p in r.wrong_pairs:
        assert p.worst, str(r)
        for e in p.worst[:3]:
            truth = E.true_jacobian_entry(forward, args, j, e.output_index, e.input_index)
            got = backward_entry(fn, args, j, e.output_index, e.input_index)
            assert got == pytest.approx(e.got, rel=1e-6, abs=1e-12)
            assert truth == pytest.approx(e.expected, rel=1e-5, abs=1e-9), (e, truth)
            assert abs(got - truth) > 1e-6 * max(1.0, abs(truth)), (e, truth)


def first_zeros(x: torch.Tensor) -> set[int]:
    """Flat indices of each row's first exact zero: where the bug is."""
    zero = x.detach() == 0
    first = zero & (zero.cumsum(-1) == 1)
    return set(first.reshape(-1).nonzero().reshape(-1).tolist())


# ------------------------------------------------------------------ 1. sparse wrong columns


def test_halving_finds_every_bad_index_it_is_asked_for():
    # 16 bad indices among 32,768, 16 wanted: every one (no more than KEEP per level before)
    bad = set(torch.randperm(32768, generator=torch.Generator().manual_seed(3))[:16].tolist())
    calls = []

    def test(parts):
        calls.append(len(parts))
        return [any(i in bad for i in p.tolist()) for p in parts]

    found = halving(32768, test, want=16, gen=torch.Generator().manual_seed(0))
    assert found is not None and set(found.tolist()) == bad
    assert sum(calls) <= 16 + 2 * 16 * math.ceil(math.log2(32768 / 16))


@pytest.mark.parametrize("bug", [pytest.param("first-zero", marks=SLOW),
                                 "first-zero-safe"])
def test_wrong_columns_at_first_zeros_are_found_not_only_caught(bug, no_full_jacobian):
    # 16 wrong columns of 32,768 (64 × 512, float32): the sample misses them, group tests
    # over all columns find every one; "first-zero" masks a division by zero with
    # torch.where, whose derivative is 0/0 there (the rows it spoils come from one-hot passes)
    fn = E.cumprod(bug)
    x = E.cumprod_inputs(64, 512, F32)
    r = gradarg.check_backward(fn, x)
    assert r.status == "wrong"
    (p,) = r.wrong_pairs
    assert "none of the compared entries" not in r.summary, r.summary
    assert p.pattern == "zero", p.sentence
    wrong_cols = set(p.columns[p.got.sub(p.expected).abs().gt(p.tolerance).any(0)].tolist())
    assert wrong_cols == first_zeros(x), p.sentence
    assert "group tests over all 32768" in p.sentence
    assert p.n_checked <= budget.BLOCK_ENTRIES
    assert_named_entries_are_wrong(fn, E.cumprod_forward, (x,), r)


@pytest.mark.parametrize("seed", range(4))
def test_at_a_smaller_size_the_wrong_columns_found_are_first_zeros(seed):
    fn = E.cumprod("first-zero")
    x = E.cumprod_inputs(16, 256, F32)
    r = gradarg.check_backward(fn, x, seed=seed)
    (p,) = r.wrong_pairs
    assert "none of the compared entries" not in r.summary, r.summary
    assert {e.input_index[0] * 256 + e.input_index[1] for e in p.worst} <= first_zeros(x)
    assert_named_entries_are_wrong(fn, E.cumprod_forward, (x,), r)


@pytest.mark.parametrize(("b", "n", "dtype"), [(64, 512, F32), (16, 256, F64)])
def test_a_right_cumulative_product_with_zeros_agrees(b, n, dtype):
    r = gradarg.check_backward(E.cumprod(), E.cumprod_inputs(b, n, dtype))
    assert r.status == "agree", str(r)


# ------------------------------------------------------------------ 2. advice that fits


@pytest.fixture
def memory_24gb(monkeypatch):
    monkeypatch.setattr(budget, "memory_bytes", lambda: 24 << 30)


@pytest.fixture
def memory_4gb(monkeypatch):
    monkeypatch.setattr(budget, "memory_bytes", lambda: 4 << 30)


def test_the_report_never_suggests_a_full_comparison_that_cannot_fit(memory_4gb):
    # 16 × 256: a full comparison of its 4096² entries needs about 7 GB, more than the 4 GB
    # this machine is made to have (the same rule as 64 × 512 against 24 GB, at a fifth of
    # the checking time)
    r = gradarg.check_backward(E.cumprod("first-zero"), E.cumprod_inputs(16, 256, F32))
    gb = float(r.full_cost.split("about ")[-1].split(" GB")[0])
    assert gb > 4  # the checker's own estimate
    text = str(r)
    assert "compares every entry" not in text
    note = next(n for n in r.notes if "localize='full'" in n)
    assert f"would need about {gb:.1f} GB" in note and "smaller input" in note, note
    # the probes alone: bounded is suggested, full is not
    probes = gradarg.check_backward(E.cumprod("first-zero"), E.cumprod_inputs(16, 256, F32),
                                    localize=False)
    assert "localize='bounded'" in probes.summary and "'full'" not in probes.summary


def test_a_full_comparison_that_fits_is_still_suggested(memory_24gb):
    assert budget.full_advice("", 1 << 30, 10**6) == "localize='full' compares every entry"
    advice = budget.full_advice("", 672 << 30, 1 << 30)
    assert "672.0 GB" in advice and "compares every entry" not in advice
    fits = int(advice.split("about ")[2].split(" Jacobian")[0].replace(",", ""))
    assert 0 < fits <= 12 * (1 << 30) / 672  # half of 24 GB at 672 bytes an entry


# ------------------------------------------------------------------ 3. flat forward or not


@pytest.mark.parametrize(("b", "n", "dtype"), SMALL_AND_LARGE)
def test_a_border_that_wraps_in_a_convolution_backward_is_no_flat_forward(b, n, dtype):
    fn = E.conv1d("wrap")
    args = E.conv_inputs(b, n, dtype)
    r = gradarg.check_backward(fn, *args)
    assert [q.input for q in r.wrong_pairs] == ["x"], r.summary
    (p,) = r.wrong_pairs
    assert p.pattern == "spurious", p.sentence
    assert "flat there" not in r.summary and HINT not in r.summary
    assert "nonzero where the Jacobian is zero" in p.sentence
    assert "do not depend on" in p.sentence
    # the entries: one border element, the output at the other end
    for e in p.worst:
        assert {e.output_index[1], e.input_index[1]} == {0, n - 1}
        assert e.expected == 0 and e.got != 0
    (a, i), (c, j) = p.worst[0].output_index, p.worst[0].input_index
    assert f"∂y[{a}, {i}]/∂x[{c}, {j}] = 0, the backward gives" in p.sentence
    assert_named_entries_are_wrong(fn, E.conv_forward, args, r)


@pytest.mark.parametrize(("b", "n", "dtype"), SMALL_AND_LARGE)
def test_an_index_that_wraps_to_the_last_bucket_is_no_flat_forward(b, n, dtype):
    fn = E.bucket_sum("wrap")
    x, index = E.bucket_inputs(b, n, dtype)
    r = gradarg.check_backward(fn, x, index)
    (p,) = r.wrong_pairs
    assert p.pattern == "spurious", p.sentence
    assert "flat there" not in r.summary and HINT not in r.summary
    for e in p.worst:  # elements in no bucket, gradient from the last bucket
        assert int(index[e.input_index[1]]) == -1
        assert e.output_index[1] == E.BUCKETS - 1 and e.expected == 0
    assert_named_entries_are_wrong(fn, E.bucket_forward, (x, index), r)


@pytest.mark.parametrize(("b", "n", "dtype"), [(8, 64, F64), (64, 512, F32)])
def test_a_true_straight_through_estimator_is_still_named_as_such(b, n, dtype):
    r = gradarg.check_backward(E.sign_ste(), E.ste_inputs(b, n, dtype))
    (p,) = r.wrong_pairs
    assert p.pattern == "not-derivative", p.sentence
    assert "the forward is flat there" in p.sentence and HINT in r.summary


@pytest.mark.parametrize("dtype", [F32, F64])
def test_the_right_conv_and_bucket_sum_agree(dtype):
    assert gradarg.check_backward(E.conv1d(), *E.conv_inputs(8, 64, dtype))
    assert gradarg.check_backward(E.bucket_sum(), *E.bucket_inputs(8, 64, dtype))


class CubeOneAtZero(torch.autograd.Function):
    """``x³``; the backward adds 1 where ``x == 0`` (the derivative is 0 there, the forward
    is not flat)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * (3 * x**2 + (x == 0).to(x.dtype))


def test_a_gradient_where_only_the_derivative_vanishes_is_no_flat_forward():
    x = torch.tensor([-1.0, 0.0, 0.5, 2.0], dtype=F64, requires_grad=True)
    r = gradarg.check_backward(CubeOneAtZero.apply, x)
    (p,) = r.wrong_pairs
    assert p.pattern == "spurious" and "not flat there" in p.sentence, p.sentence
    assert HINT not in r.summary


# ------------------------------------------------------------------ 4. supported regions


def test_one_or_two_wrong_elements_support_no_region():
    assert not supported(torch.tensor([True, False, False]))
    assert not supported(torch.tensor([True, True, False, False]))
    assert supported(torch.tensor([True, True, True, False]))


@pytest.mark.parametrize("seed", range(8))
def test_wrong_only_at_exact_zeros_is_never_called_a_region(seed):
    # the wrong elements are the first exact zeros (values 0, the others near 1): a sample
    # holding one of them splits at "x < 0.4", and a later zero elsewhere is right
    x = E.cumprod_inputs(16, 256, F32)
    r = gradarg.check_backward(E.cumprod("first-zero-safe"), x, seed=seed)
    (p,) = r.wrong_pairs
    assert p.region is None and "where x <" not in r.summary, r.summary
    if "is wrong" in p.sentence or "are wrong" in p.sentence:  # listed, with their values
        assert "] = 0" in p.sentence, p.sentence


@pytest.mark.parametrize("seed", [0, 1, *(pytest.param(s, marks=SLOW) for s in (2, 3))])
def test_a_region_that_a_right_element_contradicts_is_not_stated(seed):
    # wrong where x < 0 except at x[0] < 0: the sampled columns split exactly at 0, and so
    # they do again with the values shuffled; x[0] is right and inside
    g = torch.Generator().manual_seed(0)
    x = torch.randn(1024, generator=g, dtype=F64)
    x[0] = -abs(x[0]) - 0.1
    x.requires_grad_()
    r = gradarg.check_backward(E.leaky_relu("slice"), x, seed=seed)
    (p,) = r.wrong_pairs
    assert p.region is None and "where x <" not in r.summary, r.summary
    assert p.columns is not None  # a sample: 512 of the 1024 columns
    if 0 not in p.columns.tolist():  # x[0] not sampled: the split was in view
        assert "= -" in p.sentence  # the wrong elements listed with their values
    assert_named_entries_are_wrong(E.leaky_relu("slice"), E.leaky_relu_forward, (x,), r)


def test_a_region_every_element_supports_is_still_stated():
    x = torch.randn(1024, dtype=F64, requires_grad=True)

    class SliceFromZero(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return E.leaky_relu_forward(x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * torch.where(x > 0, torch.ones_like(x), torch.full_like(x, -E.SLOPE))

    r = gradarg.check_backward(SliceFromZero.apply, x)
    (p,) = r.wrong_pairs
    assert p.region is not None and p.region.startswith("where x < 0"), p.sentence


# ------------------------------------------------------------------ 5. precision at every shape

SHAPES = [(1, 2), (1, 4), (2, 8), (8, 64), (64, 512), (8, 4096)]


@pytest.mark.parametrize(("b", "n", "seed"), [
    pytest.param(b, n, seed, marks=SLOW if b * n >= 64 * 512 and seed else ())
    for seed in (0, 1, 2) for b, n in SHAPES])
def test_a_backward_rounding_to_bfloat16_is_named_at_every_shape(b, n, seed):
    fn = E.rmsnorm("bf16-products")
    args = E.rmsnorm_inputs(b, n, F32, seed=seed % 2)
    r = gradarg.check_backward(fn, *args, seed=seed)
    assert r.status == "wrong", str(r)
    px = next(p for p in r.wrong_pairs if p.input == "x")
    assert px.pattern == "precision", px.sentence
    assert "lower precision than the forward" in r.summary
    assert "slightly off" not in r.summary and "none of the compared" not in r.summary
    assert r.example is not None
    assert_named_entries_are_wrong(fn, E.rmsnorm_forward, args, r)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize(("b", "n"), SHAPES)
def test_the_right_rmsnorm_agrees_at_every_shape(b, n, seed):
    r = gradarg.check_backward(E.rmsnorm(), *E.rmsnorm_inputs(b, n, F32, seed=seed), seed=seed)
    assert r.status == "agree", str(r)
    assert not any(p.kind == "linearity" for p in r.probes)


# ------------------------------------------------------------------ 6. time and memory

_BUDGET_RUN = textwrap.dedent("""
    import json, resource, sys, time
    import torch
    sys.path.insert(0, {here!r})
    import edge_corpus as E
    import gradarg
    torch.set_num_threads(1)
    args = E.rmsnorm_inputs(64, 512, torch.float64)
    start = time.perf_counter()
    r = gradarg.check_backward(E.rmsnorm("bf16-sum"), *args)
    seconds = time.perf_counter() - start
    # VmHWM: this process's own peak; ru_maxrss also keeps the peak of the process it was
    # forked from before exec (a pytest worker's), which Linux carries across execve
    try:
        with open("/proc/self/status") as status:
            peak = next(int(line.split()[1]) * 1024 for line in status
                        if line.startswith("VmHWM:"))
    except (OSError, StopIteration):
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    px = [p.pattern for p in r.wrong_pairs if p.input == "x"]
    print(json.dumps({{"seconds": seconds, "peak": peak, "status": r.status,
                       "pattern": px}}))
""")


def test_a_float64_rmsnorm_summing_in_bfloat16_within_20_s_and_1_gb():
    pytest.importorskip("resource")
    code = _BUDGET_RUN.format(here=str(Path(__file__).parent))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=600, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["status"] == "wrong" and got["pattern"] == ["precision"], got
    assert got["seconds"] <= 20, got
    assert got["peak"] <= 1 << 30, got  # the whole process: Python, torch and the check
