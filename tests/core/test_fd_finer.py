"""Loose finite-difference entries estimated again on finer steps (``gradarg.core.fd_finer``).

The class: a function that varies on a finer scale than ``|x|`` without a singularity there
(``sin(k/t)`` varies on ``t² / k``) converged only at the last steps of the table, and
``jacobian(method="finite-difference")`` returned it loose, with the "fewer than four
significant digits" warning (issue 44's blind case: -562055 for -562379).  The invariant: such
an entry is taken on finer steps until it is resolved to ``LOOSE`` or the precision floor is
reached; so over the families below every entry is NaN with the "could not resolve" warning or
within ``1e-4 · (1 + |J|)`` of the derivative written by hand, with no warning.  The checkers'
references (``crossings=False``) are not refined (``fd_finer``'s docstring says why).
"""

from __future__ import annotations

import itertools
import math
import warnings

import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st

import gradarg
from gradarg.core import fd_error, fd_finer
from gradarg.core.fd_edge import EXTRA
from gradarg.core.fd_steps import MIN_STEPS

F64 = torch.float64
FUNCS = {  # f and f' by hand
    "sin(k/t)": (lambda t, k: torch.sin(k / t), lambda t, k: -k * torch.cos(k / t) / t ** 2),
    "sin(k t)": (lambda t, k: torch.sin(k * t), lambda t, k: k * torch.cos(k * t)),
    "cos(k t^3)": (lambda t, k: torch.cos(k * t ** 3),
                   lambda t, k: -3 * k * t ** 2 * torch.sin(k * t ** 3)),
    "exp(-k/t^2)": (lambda t, k: torch.exp(-k / t ** 2),
                    lambda t, k: 2 * k / t ** 3 * torch.exp(-k / t ** 2)),
}


def _jacobian(f, x):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = gradarg.jacobian(f, x, method="finite-difference")
    return got, " ".join(str(w.message) for w in caught)


def test_the_blind_case_is_resolved_without_a_warning() -> None:
    x = torch.tensor([1e-3], dtype=F64)
    got, said = _jacobian(lambda t: torch.sin(1 / t), x)
    want = -math.cos(1000.0) / 1e-6
    assert abs(float(got) - want) <= 1e-8 * abs(want), (float(got), want)
    assert said == ""


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(sorted(FUNCS)), log_t=st.floats(-4.0, 1.5),
       log_k=st.floats(-1.0, 3.0), sign=st.sampled_from([1.0, -1.0]))
@example(name="sin(k/t)", log_t=-3.0, log_k=0.0, sign=1.0)  # the blind case
@example(name="sin(k/t)", log_t=-2.0, log_k=-1.0, sign=-1.0)
@example(name="cos(k t^3)", log_t=1.0, log_k=0.5, sign=1.0)
def test_an_entry_is_resolved_or_nan(name: str, log_t: float, log_k: float,
                                     sign: float) -> None:
    f, df = FUNCS[name]
    k = 10.0 ** log_k
    x = torch.tensor([sign * 10.0 ** log_t], dtype=F64)
    got, said = _jacobian(lambda t: f(t, k), x)
    want = float(df(x, k))
    if math.isnan(float(got)):
        assert "could not resolve" in said, (name, x, k)
    else:
        assert abs(float(got) - want) <= 1e-4 * (1 + abs(want)), (name, x, k, float(got), want)
        assert "fewer than four significant digits" not in said, (name, x, k)


@pytest.mark.parametrize("t", [1e-3, -2e-3, 5e-3])
def test_a_loose_column_beside_a_smooth_one(t: float) -> None:
    """Only the loose column is taken up; the other keeps its value, and both are right."""
    x = torch.tensor([t, 0.7], dtype=F64)
    got, said = _jacobian(lambda u: torch.stack([torch.sin(1 / u[0]), torch.sin(u[1])]), x)
    want = torch.tensor([[-math.cos(1 / t) / t ** 2, 0.0], [0.0, math.cos(0.7)]], dtype=F64)
    assert torch.allclose(got, want, rtol=1e-4, atol=1e-9), (got, want)  # LOOSE
    assert said == ""


def test_the_checkers_reference_is_not_refined() -> None:
    """``crossings=False`` (the checkers): the table's own estimate and error, loose."""
    x = torch.tensor([1e-3], dtype=F64)
    est = fd_error.partials(lambda t: torch.sin(1 / t), (x,))[0][0]
    value, error = float(est.value[0].flatten()[0]), float(est.error[0].flatten()[0])
    assert error > 1e-4 * abs(value)  # loose, and said to be
    assert abs(value - (-math.cos(1000.0) / 1e-6)) <= error


def _fake(errors: list[float]):
    """A one-entry table (value 1, error 0.5: loose) and an ``analyse`` that returns the value
    ``10 + k`` with error ``errors[k]`` at its ``k``-th window, recording each window's step."""
    K = 6
    z = torch.zeros((1, 1), dtype=F64)
    first = ([torch.ones((1, 1), dtype=F64)], [torch.full((1, 1), 0.5, dtype=F64)],
             [z.bool()], [z.bool()], [z.bool()])
    h0 = torch.ones(1, dtype=F64)

    def evaluate(h, cols):
        p = torch.zeros((cols.numel(), 1), dtype=F64)
        return (p,), (p.clone(),), h.reshape(-1), h.reshape(-1)

    rows = [evaluate(h0 / 2**k, torch.arange(1)) for k in range(K)]
    seen: list[float] = []

    def analyse(window, ev, h, xsc):
        k = len(seen)
        seen.append(float(h[0]))
        assert len(window) == MIN_STEPS + EXTRA
        return ([torch.full((1, 1), 10.0 + k, dtype=F64)], [torch.full((1, 1), errors[k], dtype=F64)],
                [z.bool()], [z.bool()], [z.bool()])

    out = fd_finer.past_loose(first, rows, evaluate, (torch.zeros(1, dtype=F64),), h0,
                              torch.ones(1, dtype=F64), 1e-30, analyse, fd_finer.LOOSE)
    return out, seen, first


def test_a_window_with_a_larger_error_is_not_taken() -> None:
    out, seen, first = _fake([0.9, 0.8, 0.7])
    assert float(out[0][0]) == 1.0 and float(out[1][0]) == 0.5  # kept: every window worse
    assert float(first[0][0][0, 0]) == 1.0  # the table's tensors are not modified
    assert len(seen) == fd_finer.WINDOWS


def test_windows_go_finer_until_the_entry_is_resolved() -> None:
    out, seen, _ = _fake([0.1, 1e-5, 1e-9])
    assert float(out[0][0]) == 11.0 and float(out[1][0]) == 1e-5  # the second window's
    assert len(seen) == 2  # and it stopped there: resolved
    assert all(b < a for a, b in itertools.pairwise(seen))  # each window finer
