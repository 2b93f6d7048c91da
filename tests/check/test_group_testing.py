"""Group-testing localisation: a few wrong entries among 10^5 found in O(k log n) products,
against the derivative (finite differences) and against an intended backward (expected=)."""

from __future__ import annotations

import math

import pytest
import torch

import gradarg
from gradarg.check.localize import halving

F64 = torch.float64
N = 100_000
BAD = (7, 41_999, 99_998)


@pytest.mark.parametrize("k", [1, 3, 8])
def test_halving_finds_k_bad_indices_in_order_k_log_n_tests(k):
    bad = set(torch.randperm(N, generator=torch.Generator().manual_seed(k))[:k].tolist())
    tested = []

    def test(parts):
        tested.extend(parts)
        return [any(i in bad for i in p.tolist()) for p in parts]

    found = halving(N, test, want=16, gen=torch.Generator().manual_seed(0))
    assert found is not None and set(found.tolist()) == bad
    # 16 first groups, then two halves per bad group per level
    assert len(tested) <= 16 + 2 * k * math.ceil(math.log2(N / 16))


def test_halving_says_none_when_no_group_is_bad():
    assert halving(N, lambda parts: [False] * len(parts), 16, torch.Generator()) is None


class ScaleWrongAtAFew(torch.autograd.Function):
    """y = 2x; the backward gives 3 instead of 2 at three entries out of 10^5."""

    @staticmethod
    def forward(ctx, x, bad=BAD):
        ctx.bad = list(bad)
        return 2 * x

    @staticmethod
    def backward(ctx, g):
        out = 2 * g
        out[ctx.bad] = 3 * g[ctx.bad]
        return out, None


# against finite differences, 10^5 entries take a minute of CPU: CI checks 2·10^4 (the same
# group tests, two levels fewer), GRADARG_SLOW_TESTS=1 the 10^5 of the title too
@pytest.mark.parametrize("n", [20_000, pytest.param(N, marks=pytest.mark.slow)])
def test_a_few_wrong_entries_among_1e5_are_named_against_the_derivative(n):
    bad = tuple(b * n // N for b in BAD)
    x = torch.randn(n, dtype=F64, requires_grad=True)
    r = gradarg.check_backward(lambda t: ScaleWrongAtAFew.apply(t, bad), x)
    assert r.status == "wrong"
    p = r.wrong_pairs[0]
    assert {e.input_index[0] for e in p.worst} == set(bad), str(r)
    assert "group tests" in p.sentence and " only" not in p.sentence


def test_a_few_wrong_entries_among_1e5_are_named_against_an_intended_backward():
    x = torch.randn(N, dtype=F64, requires_grad=True)
    r = gradarg.check_backward(ScaleWrongAtAFew.apply, x,
                               expected=lambda g, x: 2 * g)
    assert r.status == "wrong"
    p = r.wrong_pairs[0]
    assert {e.input_index[0] for e in p.worst} == set(BAD), str(r)
    assert "none of the compared entries" not in r.summary
