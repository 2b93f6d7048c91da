"""Low-precision backwards at saturating inputs (issue 44): a right backward is never WRONG
because its dtype cannot resolve the derivative.

``tanh`` at ``x = -10`` in float32: ``y`` rounds to -1, so the right backward ``1 - y²``
gives 0 where the derivative is 8.2e-9 (float64 finite differences see it).  Invariant: a
backward is called wrong only by a difference larger than the dtype's rounding of the forward
values allows, measured by the same backward on float64 copies; below that the result says
the difference is within the dtype's rounding and names the dtype.  A planted wrong backward
(a factor 2, a dropped term) is still found wherever the difference is resolvable.

Derivatives by hand; the saturating points generated per function.
"""

from __future__ import annotations

import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st

import gradarg

# f, its derivative from (x, y) written by hand, and a dropped-term variant
FUNCS = {
    "tanh": (torch.tanh, lambda x, y: 1 - y * y, lambda x, y: torch.ones_like(y)),
    "sigmoid": (torch.sigmoid, lambda x, y: y * (1 - y), lambda x, y: y),
    "exp": (torch.exp, lambda x, y: y, lambda x, y: y - 1),
    "log1p": (torch.log1p, lambda x, y: 1 / (1 + x), lambda x, y: 1 / x),
    "softplus": (torch.nn.functional.softplus, lambda x, y: torch.sigmoid(x),
                 lambda x, y: torch.exp(x)),
}
POINTS = {
    "tanh": [-30.0, -12.0, -10.0, -9.0, -8.0, -5.0, 0.5, 8.0, 9.0, 10.0, 20.0],
    "sigmoid": [-80.0, -30.0, -17.0, -10.0, 0.3, 10.0, 17.0, 30.0, 80.0],
    "exp": [-80.0, -30.0, -10.0, 0.2, 10.0, 40.0, 80.0],
    "log1p": [-0.999, -0.5, 1e-8, 1.0, 1e4, 1e8, 1e20],
    "softplus": [-80.0, -30.0, -15.0, 0.1, 15.0, 30.0, 80.0],
}


def make(name: str, variant: str):
    f, d, dropped = FUNCS[name]

    class Fn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = f(x)
            ctx.save_for_backward(x, y)
            return y

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            if variant == "right":
                return g * d(x, y)
            if variant == "factor":
                return g * 2 * d(x, y)
            return g * dropped(x, y)

    return Fn.apply


@st.composite
def cases(draw):
    name = draw(st.sampled_from(sorted(FUNCS)))
    pts = draw(st.lists(st.sampled_from(POINTS[name]), min_size=1, max_size=3))
    dtype = draw(st.sampled_from([torch.float32, torch.float32, torch.float64,
                                  torch.bfloat16]))
    return name, pts, dtype


def _resolvable(name, variant, x, dtype, block=False):
    """Where the planted backward differs from the derivative by more than any rounding of
    ``dtype`` may explain: the difference (float64, by hand) above 1% of the derivative and
    above 1e3·eps(dtype)·|y| and the dtype's rtol times the block's largest derivative.
    ``block``: |y| is the block's largest (compare_vjp sums every output along an element:
    sigmoid at [-80, 80], where the output 1 - 2e-35 never moves along x[0], bounds that
    element's vᵀJ by its own rounding, 4e-14, far above the planted 1.8e-35)."""
    f, d, dropped = FUNCS[name]
    x64 = x.double()
    y = f(x64)
    true = d(x64, y)
    bad = 2 * true if variant == "factor" else dropped(x64, y)
    diff = (bad - true).abs()
    eps = torch.finfo(dtype).eps
    size = y.abs().max() if block else y.abs()
    return bool(((diff > 1e-2 * true.abs()) & (diff > 1e3 * eps * size)
                 & (diff > 1e2 * gradarg.backward_rtol(dtype) * true.abs().max())).any())


@settings(max_examples=max(1, settings.default.max_examples), deadline=None)
@given(cases(), st.sampled_from(["right", "factor", "dropped"]))
def test_saturating_backward_is_right_within_rounding_and_planted_bugs_found(case, variant):
    name, pts, dtype = case
    x = torch.tensor(pts, dtype=torch.float64).to(dtype)
    r = gradarg.check_backward(make(name, variant), x.clone().requires_grad_(),
                               reference="finite-difference")
    if variant == "right":
        # right: agree, or could not check where the reference cannot resolve; never wrong
        assert r.status in ("agree", "could-not-check"), (name, pts, dtype, r.summary)
        if "rounding: see the note" in r.summary:
            assert str(dtype).replace("torch.", "") in r.summary
    elif _resolvable(name, variant, x, dtype):
        assert r.status == "wrong", (name, pts, dtype, variant, r.summary)


@settings(max_examples=max(1, settings.default.max_examples), deadline=None)
@given(cases(), st.sampled_from(["right", "factor", "dropped"]))
@example(("sigmoid", [30.0, 30.0], torch.float32), "dropped")  # was "could not check"
@example(("sigmoid", [-80.0, 80.0], torch.float32), "factor")  # beyond any check: see above
def test_saturating_compare_vjp_never_disagrees_when_right(case, variant):
    name, pts, dtype = case
    x = torch.tensor(pts, dtype=torch.float64).to(dtype)
    v = torch.ones_like(x)
    c = gradarg.compare_vjp(make(name, variant), x, v)
    if variant == "right":
        assert c.status in ("agree", "could not check"), (name, pts, dtype, str(c))
        if "rounding" in c.note:
            assert str(dtype).replace("torch.", "") + " rounding" in c.note
    elif _resolvable(name, variant, x, dtype, block=True):
        assert c.status == "DISAGREE", (name, pts, dtype, variant, str(c))


def test_tanh_at_minus_10_in_float32():
    x = torch.tensor([-10.0], requires_grad=True)
    r = gradarg.check_backward(make("tanh", "right"), x, reference="finite-difference")
    assert r.status == "agree", r.summary
    assert "1 entry within float32 rounding" in r.summary
    assert any("within float32 rounding" in n and "x[0] = -10" in n for n in r.notes)
    # the same point with a factor 2: 2·8.2e-9 is no more resolvable in float32 (both 0)
    # but a planted factor at a point float32 resolves is WRONG
    x = torch.tensor([-10.0, 0.5], requires_grad=True)
    r = gradarg.check_backward(make("tanh", "factor"), x, reference="finite-difference")
    assert r.status == "wrong", r.summary
