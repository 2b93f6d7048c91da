"""``jacobian(method="finite-difference")``: steps chosen per entry from an error estimate
(issue 44), and a warning where the differences cannot resolve the derivative."""

from __future__ import annotations

import warnings

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import gradarg


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("mag", [1.0, 1e3, 1e4, 1e6])
def test_sin_derivative_at_large_magnitudes(mag, dtype):
    # before: one step of eps**(1/3)·|x| (4.9 at 1e3 in float32) got the sign of cos wrong
    x = (mag + torch.linspace(0, 3, 7, dtype=torch.float64)).to(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # resolved: no warning
        jac = gradarg.jacobian(torch.sin, x, method="finite-difference")
    assert jac.dtype == dtype
    want = x.double().cos()  # the derivative, not another route of this package
    tol = 1e-9 * max(1.0, mag / 1e4) if dtype == torch.float64 else 1e-6
    assert torch.allclose(jac.diagonal().double(), want, rtol=0, atol=tol)
    assert torch.equal(jac - torch.diag(jac.diagonal()), torch.zeros_like(jac))


def test_unresolved_entries_warn_with_their_place():
    x = torch.tensor([1e17, 2.0], dtype=torch.float64)
    with pytest.warns(RuntimeWarning, match=r"could not resolve 1 entry \(∂y\[0\]/∂x\[0\] at "
                                            r"x\[0\] = 1e\+17\)"):
        jac = gradarg.jacobian(torch.sin, x, method="finite-difference")
    assert abs(float(jac[1, 1]) - float(torch.cos(x[1]))) < 1e-9  # the rest resolved


def test_log_at_large_magnitude_still_resolved():
    # the steps still span max(1, |x|): functions that curve on the scale of |x|
    x = torch.tensor([1e6, 3e5], dtype=torch.float32)
    jac = gradarg.jacobian(torch.log, x, method="finite-difference")
    assert torch.allclose(jac.diagonal().double(), 1 / x.double(), rtol=1e-6, atol=0)


@settings(max_examples=max(1, 8 * settings.default.max_examples // 25))
@given(st.floats(-6.0, 6.0), st.sampled_from([torch.float32, torch.float64]),
       st.sampled_from(["sin", "tanh", "exp"]))
def test_finite_difference_matches_autograd(e, dtype, name):
    fn = getattr(torch, name)
    x = torch.tensor([10**e, -(10**e) / 3], dtype=torch.float64).to(dtype)
    ref = torch.func.jacrev(fn)(x.double())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        jac = gradarg.jacobian(fn, x, method="finite-difference")
    if not torch.isfinite(ref).all():
        return
    bad = (jac.double() - ref).abs() > 1e-5 * ref.abs().clamp_min(1) + (
        1e-6 if dtype == torch.float32 else 1e-9)
    # wrong only where it warned: never silently
    assert not bool(bad.any()) or any("could not resolve" in str(w.message) for w in caught)
