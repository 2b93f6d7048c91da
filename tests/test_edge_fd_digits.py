"""Finite-difference entries returned in silence are good to four significant digits (issue 44,
a blind edge case: ``jacobian(lambda t: torch.sin(1/t), 1e-3, method="finite-difference")``
gave -562055 for -562379, off by 6e-4 relative, with no word; its own error estimate was 8e-3).

Invariant: an entry of ``jacobian(method="finite-difference")`` is NaN with the "could not
resolve" warning, or within ``1e-4 · (1 + |J|)`` of the derivative, or named by the "fewer than
four significant digits" warning.  The oracle is the derivative written by hand.
"""

from __future__ import annotations

import math
import warnings

import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st

import gradarg

F64 = torch.float64
# f and f' by hand, on scales from 1e-6 to 1e3
FUNCS = {
    "sin(k/t)": (lambda t, k: torch.sin(k / t), lambda t, k: -k * torch.cos(k / t) / t ** 2),
    "sin(k t)": (lambda t, k: torch.sin(k * t), lambda t, k: k * torch.cos(k * t)),
    "cos(t^3)": (lambda t, k: torch.cos(k * t ** 3), lambda t, k: -3 * k * t ** 2 * torch.sin(k * t ** 3)),
}


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(sorted(FUNCS)), log_t=st.floats(-4.0, 1.5),
       log_k=st.floats(-1.0, 3.0), sign=st.sampled_from([1.0, -1.0]))
@example(name="sin(k/t)", log_t=-3.0, log_k=0.0, sign=1.0)  # the blind case
def test_an_entry_returned_in_silence_has_four_digits(name, log_t, log_k, sign):
    f, df = FUNCS[name]
    k = 10.0 ** log_k
    x = torch.tensor([sign * 10.0 ** log_t], dtype=F64)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = float(gradarg.jacobian(lambda t: f(t, k), x, method="finite-difference"))
    said = " ".join(str(w.message) for w in caught)
    want = float(df(x, k))
    if math.isnan(got):
        assert "could not resolve" in said, (name, x, k)
    elif abs(got - want) > 1e-4 * (1 + abs(want)):
        assert "fewer than four significant digits" in said, (name, x, k, got, want)
