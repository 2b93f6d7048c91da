"""compare_vjp never calls a right backward wrong: the cases users hit, judged by gradcheck.

Each correct function is first judged by an independent tool (``torch.autograd.gradcheck`` in
float64, or forward mode); then the finite-difference comparer must agree with that judgement.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from backward_corpus import SinBackwardInFloat32

import gradarg

F64 = torch.float64


def _mse_sum(t):
    return F.mse_loss(t, torch.zeros_like(t), reduction="sum")


def _sin_offset(t):
    return torch.sin(t) + 1e4


def _cos100(t):
    return torch.cos(100 * t)


def _square_sum(t):
    return (t * t).sum()


def _cases():
    g = torch.Generator().manual_seed(1)
    return [
        pytest.param(_mse_sum, torch.randn(1000, dtype=F64, generator=g), id="mse_loss sum 1000"),
        pytest.param(_sin_offset, torch.randn(200, dtype=F64, generator=g), id="sin(x)+1e4"),
        pytest.param(torch.log, 0.01 + 1e-3 * torch.rand(200, dtype=F64, generator=g),
                     id="log(p) p~0.01"),
        pytest.param(torch.sqrt, 1e-3 * (1 + 0.1 * torch.rand(200, dtype=F64, generator=g)),
                     id="sqrt(d) d~1e-3"),
        pytest.param(_cos100, torch.randn(200, dtype=F64, generator=g), id="cos(100x)"),
        pytest.param(_square_sum, torch.randn(1000, generator=g), id="float32 (x*x).sum() 1000"),
    ]


def _v_for(fn, x):
    y = fn(x)
    return torch.linspace(-1.0, 2.0, y.numel(), dtype=y.dtype).reshape(y.shape)


@pytest.mark.parametrize(("fn", "x"), _cases())
def test_right_backward_is_not_called_wrong(fn, x):
    # the independent judge first: gradcheck (float64) and forward mode say the backward is right
    assert torch.autograd.gradcheck(fn, (x.double().requires_grad_(),), fast_mode=True)
    v = _v_for(fn, x)
    assert gradarg.compare_vjp(fn, x, v, reference="forward").agree
    r = gradarg.compare_vjp(fn, x, v)
    assert r.reference_name == "finite-difference"
    assert r.agree, str(r)
    assert r.rtol == gradarg.backward_rtol(x.dtype)


def test_backward_computed_in_float32_is_caught_for_a_float64_function():
    x = torch.linspace(-2.0, 2.0, 50, dtype=F64)
    v = torch.linspace(0.5, 1.5, 50, dtype=F64)
    truth = v * torch.cos(x)  # by hand
    r = gradarg.compare_vjp(SinBackwardInFloat32.apply, x, v)
    err = float((r.backward - truth).abs().max())
    assert 1e-9 < err < 1e-6  # float32 rounding: wrong, but only in the 8th digit
    assert not r.agree
    # gradcheck's default tolerances (rtol=1e-3, atol=1e-5) miss it
    assert torch.autograd.gradcheck(SinBackwardInFloat32.apply, (x.clone().requires_grad_(),))


class _WritesIntoGradOutput(torch.autograd.Function):
    """y = 3x, correct, but the backward scales its grad_output in place."""

    @staticmethod
    def forward(ctx, x):
        return 3 * x

    @staticmethod
    def backward(ctx, g):
        return g.mul_(3)


def test_v_is_copied_before_the_backward():
    x = torch.tensor([1.0, -2.0], dtype=F64)
    v = torch.tensor([1.0, 10.0], dtype=F64)
    r = gradarg.compare_vjp(_WritesIntoGradOutput.apply, x, v)
    assert torch.equal(v, torch.tensor([1.0, 10.0], dtype=F64))
    torch.testing.assert_close(r.reference, torch.tensor([3.0, 30.0], dtype=F64))
    assert r.agree


class _DropsGradient(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * x

    @staticmethod
    def backward(ctx, g):
        return None


def test_backward_returning_none_is_a_disagreement_with_zeros():
    x = torch.tensor([1.0, -2.0, 3.0], dtype=F64)
    v = torch.ones(3, dtype=F64)
    r = gradarg.compare_vjp(_DropsGradient.apply, x, v)
    assert not r.agree
    assert torch.equal(r.backward, torch.zeros(3, dtype=F64))
    torch.testing.assert_close(r.reference, 2 * x, rtol=1e-8, atol=1e-8)
    assert "returned None" in r.note and "depends on x" in r.note
    assert "returned None" in str(r)


def test_output_that_really_does_not_depend_on_x_still_raises():
    w = torch.ones(3, dtype=F64, requires_grad=True)
    with pytest.raises(ValueError, match="does not depend on x"):
        gradarg.compare_vjp(lambda t: w * 2, torch.ones(3, dtype=F64), torch.ones(3, dtype=F64))


@pytest.mark.parametrize("reference", ["finite-difference", "forward"])
def test_works_under_no_grad(reference):
    x = torch.tensor([0.5, 1.5], dtype=F64)
    v = torch.tensor([1.0, -1.0], dtype=F64)
    with torch.no_grad():
        r = gradarg.compare_vjp(torch.sin, x, v, reference=reference)
        assert not torch.is_grad_enabled()
    assert r.agree
    torch.testing.assert_close(r.backward, v * torch.cos(x), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [F64, torch.float32])
def test_relu_at_its_kink_is_not_called_wrong(dtype):
    # torch's relu'(0) = 0 is a valid subgradient; the one-sided slopes at 0 are 0 and 1
    x = torch.tensor([-1.0, 0.0, 2.0], dtype=dtype)
    r = gradarg.compare_vjp(torch.relu, x, torch.ones(3, dtype=dtype))
    assert r.agree
    torch.testing.assert_close(r.backward, torch.tensor([0.0, 0.0, 1.0], dtype=dtype))


def test_a_jump_at_x_makes_the_reference_say_it_is_uncertain():
    # t + 1 for t >= 0, t below: a jump of 1 at 0, where no derivative exists
    x = torch.tensor([0.0, 1.0], dtype=F64)
    r = gradarg.compare_vjp(lambda t: torch.where(t >= 0, t + 1, t), x, torch.ones(2, dtype=F64))
    # the differences do not resolve a derivative there: "could not check", never "agree"
    assert r.status == "could not check" and not r.agree
    assert "x[0] = 0" in r.note and "x[1]" not in r.note


def test_dropout_mask_is_the_same_in_reference_and_backward():
    x = torch.linspace(0.5, 2.0, 8, dtype=F64)
    r = gradarg.compare_vjp(lambda t: F.dropout(t, 0.5, training=True) * t, x,
                            torch.ones(8, dtype=F64))
    assert r.agree and r.note == ""
    assert r.max_abs_error < 1e-8
    kept = r.backward != 0  # d(m t²)/dt = 2 m t with m in {0, 2}
    torch.testing.assert_close(r.backward[kept], 4 * x[kept])
