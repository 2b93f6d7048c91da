"""The random check of a compressed derivative (``certify=``) never passes in silence over a
pattern that misses an entry above rounding: it fails (``CertificateError``) or warns that
entries that small may be missing; over a right pattern it neither fails nor warns.  The
oracle is the construction: the missing entries are planted, with their size relative to
the others."""

from __future__ import annotations

import warnings

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import gradarg
from gradarg.sparse.certificate import ROUNDING

D = torch.float64
EPS = torch.finfo(D).eps
n_st = st.integers(3, 8)
big_st = st.floats(1.0, 1e8)
# the planted entries' size relative to the diagonal: from just above rounding to large
ratio_st = st.floats(4 * ROUNDING * EPS, 1e-1)


def outcome(call):
    """"error", "warning" or "silent"."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            call()
        except gradarg.CertificateError:
            return "error"
    return "warning" if any("random check" in str(w.message) for w in seen) else "silent"


@given(n=n_st, big=big_st, ratio=ratio_st, seed=st.integers(0, 1000))
def test_a_missing_entry_above_rounding_is_never_passed_in_silence(n, big, ratio, seed):
    x = torch.linspace(0.5, 1.5, n, dtype=D)
    diagonal = torch.eye(n, dtype=torch.bool)
    gen = torch.Generator().manual_seed(seed)

    def f(u):
        return big * u + big * ratio * torch.roll(u, 1)

    def h(u):
        return big * (u**2).sum() + big * ratio * (u[1:] * u[:-1]).sum()

    sj = gradarg.SparseJacobian(diagonal)
    assert outcome(lambda: sj(f, x, certify=3, generator=gen)) != "silent"
    sh = gradarg.SparseHessian(diagonal)
    assert outcome(lambda: sh(h, x, certify=3, generator=gen)) != "silent"


@given(n=n_st, big=big_st, ratio=st.floats(0.0, 1e-1), seed=st.integers(0, 1000))
def test_a_right_pattern_neither_fails_nor_warns(n, big, ratio, seed):
    x = torch.linspace(0.5, 1.5, n, dtype=D)
    band = (torch.arange(n)[:, None] - torch.arange(n)).remainder(n) <= 1  # diagonal + roll
    gen = torch.Generator().manual_seed(seed)

    def f(u):
        return big * torch.tanh(u) + big * ratio * torch.roll(u, 1) ** 2

    assert outcome(lambda: gradarg.SparseJacobian(band)(f, x, certify=3, generator=gen)) \
        == "silent"


def test_the_warning_names_the_size_it_could_not_see():
    x = torch.linspace(0.3, 1.1, 6, dtype=D)
    sj = gradarg.SparseJacobian(torch.eye(6, dtype=torch.bool))
    with pytest.warns(UserWarning, match=r"passed within its tolerance .* difference of "
                                         r"[0-9.]+e-1[0-9] of the scale remains.*may miss"):
        sj(lambda u: 1e8 * u + 1e-2 * torch.roll(u, 1), x, certify=3,
           generator=torch.Generator().manual_seed(0))
