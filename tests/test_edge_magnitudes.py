"""Inputs that mix magnitudes (issue 44, the silently-wrong class left after the
finite-difference reference got Ridders steps): 0, subnormals, 1e-300, 1, 1e300, negative.

Invariant: the error bound of a finite-difference entry comes from that entry's own step and
values; an entry the differences could not resolve is never returned as a number
(``jacobian(method="finite-difference")``: NaN and a ``RuntimeWarning`` naming it;
``compare_vjp``: "could not check" for the elements it reaches; ``check_backward``: never
"wrong" because of it).  Example: ``x = [0, -1.1e-308, 1e300]``, ``f = 3·x.sum()``: the output
3e300 does not move for any step along ``x[0]``, and ``J[0]`` was returned as 0 without a word.

The oracle is ``torch.func.jacrev``; a backward written by hand (``Lin``), right or with a
planted factor 2, is the one under test.
"""

from __future__ import annotations

import math
import warnings

import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st

import gradarg

F64 = torch.float64
MAGNITUDES = [0.0, 5e-324, -5e-324, 1e-310, -1.1e-308, 1e-300, -1e-300, 1.0, -1.0, 2.5,
              1e300, -1e300, 7e299]
values = st.one_of(st.sampled_from(MAGNITUDES), st.floats(-3.0, 3.0))

# elementwise g and its derivative, written by hand (not by this package)
G = {
    "identity": (lambda t: t, lambda t: torch.ones_like(t)),
    "tanh": (torch.tanh, lambda t: 1 - torch.tanh(t) ** 2),
    "atan": (torch.atan, lambda t: 1 / (1 + t * t)),
}


def make(a: torch.Tensor, g: str, factor: float):
    """``y = A @ g(x)`` with a backward by hand, times ``factor`` (1: right)."""
    g_fn, g_der = G[g]

    class Lin(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return a.to(x.dtype) @ g_fn(x)

        @staticmethod
        def backward(ctx, go):
            (x,) = ctx.saved_tensors
            return factor * (a.to(x.dtype).T @ go) * g_der(x)

    return Lin.apply


@st.composite
def cases(draw):
    xs = draw(st.lists(values, min_size=1, max_size=4))
    n = len(xs)
    m = draw(st.integers(1, 3))
    a = draw(st.lists(st.integers(-3, 3), min_size=m * n, max_size=m * n))
    a = torch.tensor(a, dtype=F64).reshape(m, n)
    if not bool((a != 0).any()):
        a[0, 0] = 1.0
    return torch.tensor(xs, dtype=F64), a, draw(st.sampled_from(sorted(G)))


def _oracle(a, g, x):
    return torch.func.jacrev(lambda t: a @ G[g][0](t))(x)


@settings(max_examples=max(1, settings.default.max_examples), deadline=None)
@given(cases())
@example((torch.tensor([1e300, 0.0, 0.0, 1e300], dtype=F64),  # the long profile: y = -x0 +
          torch.tensor([[-1.0, 0.0, 1.0, 1.0]], dtype=F64), "identity"))  # x2 + x3 = 0 by
def test_mixed_magnitudes_jacobian_is_right_or_nan_with_a_warning(case):  # cancellation
    x, a, g = case
    fn = make(a, g, 1.0)
    want = _oracle(a, g, x)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        jac = gradarg.jacobian(fn, x, method="finite-difference")
    nan = torch.isnan(jac)
    said = [str(w.message) for w in caught if "could not resolve" in str(w.message)]
    assert bool(nan.any()) == bool(said), (x, jac, said)
    if said:
        assert f"could not resolve {int(nan.sum())} entr" in said[0]
    # every number returned is the derivative, to the size of the derivatives near it
    near = torch.maximum(want.abs().amax(1, keepdim=True), want.abs().amax(0, keepdim=True))
    ok = nan | ((jac - want).abs() <= 1e-6 * near + 1e-300)
    assert bool(ok.all()), (x, a, g, jac, want)
    # without mixed magnitudes nothing is given up
    if float(x.abs().max()) <= 1e3:
        assert not bool(nan.any()), (x, jac)


@settings(max_examples=max(1, settings.default.max_examples // 2), deadline=None)
@given(cases(), st.sampled_from([1.0, 2.0]))
def test_mixed_magnitudes_compare_vjp_never_wrong_and_finds_a_planted_factor(case, factor):
    x, a, g = case
    fn = make(a, g, factor)
    v = torch.linspace(1.0, 2.0, a.shape[0], dtype=F64)  # positive: no cancellation
    want = _oracle(a, g, x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = gradarg.compare_vjp(fn, x, v)
        jac = gradarg.jacobian(make(a, g, 1.0), x, method="finite-difference")
    assert r.status in ("agree", "DISAGREE", "could not check"), r.status
    # the tolerance is each element's own: never the 1e288 of a neighbour
    assert r.atol < 1e-6 * max(1.0, float((v @ want.abs()).max())), str(r)
    if factor == 1.0:
        assert r.status != "DISAGREE", str(r)
    else:
        # an element whose column the differences resolved, with a nonzero vᵀJ, shows it
        seen = ~torch.isnan(jac).any(0) & ((v @ want).abs() > 0)
        if bool(seen.any()):
            assert r.status == "DISAGREE", (str(r), jac)


@settings(max_examples=max(1, settings.default.max_examples // 3), deadline=None)
@given(cases(), st.sampled_from([1.0, 2.0]))
@example((torch.tensor([0.0, 0.0, 0.0, 1e300], dtype=F64),  # a random sweep: the probes'
          torch.tensor([[0.0, 1.0, 1.0, 0.0]], dtype=F64), "atan"), 1.0)  # steps never reach
def test_mixed_magnitudes_check_backward_never_wrong_and_finds_a_planted_factor(case,
                                                                                  factor):
    x, a, g = case
    fn = make(a, g, factor)
    want = _oracle(a, g, x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = gradarg.check_backward(fn, x.clone().requires_grad_(),
                                   reference="finite-difference")
        jac = gradarg.jacobian(make(a, g, 1.0), x, method="finite-difference")
    if factor == 1.0:
        assert r.status != "wrong", r.summary
    elif bool(((~torch.isnan(jac)) & (want != 0)).any()):
        assert r.status == "wrong", (r.summary, jac)


def test_the_issue_example():
    x = torch.tensor([0, -1.1e-308, 1e300], dtype=F64)

    def f(t):
        return (3 * t).sum()

    with pytest.warns(RuntimeWarning, match=r"could not resolve 2 entries \(∂y\[\]/∂x\[0\] "
                                            r"at x\[0\] = 0; ∂y\[\]/∂x\[1\] at x\[1\] = "
                                            r"-1\.1e-308\)"):
        jac = gradarg.jacobian(f, x, method="finite-difference")
    assert math.isnan(jac[0]) and math.isnan(jac[1]) and abs(float(jac[2]) - 3) < 1e-9
    r = gradarg.compare_vjp(f, x, torch.tensor(1.0, dtype=F64))
    assert r.status == "could not check" and "x[0] = 0, x[1] = -1.1e-308" in r.note, str(r)
    assert r.atol < 1e-6, str(r)  # element 2's own tolerance, not 1e288


@pytest.mark.parametrize("off", [0.0, 5e-5])
def test_each_element_has_its_own_tolerance(off):
    # element 0 of vᵀJ is -1e6 (1e6·sin at π) with an estimated error of 1e-5 and a
    # rounding allowance of 1e-4; element 1 is 1, both of order 1e-10 there: an error of
    # 5e-5 planted in element 1 is found (with the largest element's tolerance for all, it
    # "agreed")
    class Planted(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return torch.stack([1e6 * torch.sin(x[0]), x[1]])

        @staticmethod
        def backward(ctx, go):
            (x,) = ctx.saved_tensors
            return torch.stack([go[0] * 1e6 * torch.cos(x[0]), go[1] * (1 + off)])

    x = torch.tensor([math.pi, 0.5], dtype=F64)
    r = gradarg.compare_vjp(Planted.apply, x, torch.ones(2, dtype=F64))
    assert r.status == ("agree" if off == 0 else "DISAGREE"), str(r)
