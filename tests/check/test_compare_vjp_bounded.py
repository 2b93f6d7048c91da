"""compare_vjp where the finite differences only bound vᵀJ: a backward beyond the bound is
DISAGREE, a right one never is.

An output that no step along an input element moves (``sigmoid`` at 30 in float64: 1 - 9e-14,
whose neighbours' outputs never change along the other elements) leaves that Jacobian entry
unresolved: it is known only to be no larger than the rounding of the output over the largest
step.  Before, any element of vᵀJ that met such an entry was "could not check", even where the
backward under test was off by 1 (a dropped term: ``y`` for ``y (1 - y)``), and the same
backward at one point alone was DISAGREE.  Invariant: a backward off by far more than any
rounding can explain (1e-3 of the largest |v_i| max(1, |y_i|, |f'(x_i)|)) is DISAGREE at
every point and every number of points; the right backward (by hand) is never DISAGREE.

Truth by hand: the derivatives below, written from the functions' formulas.
"""

from __future__ import annotations

import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st

import gradarg

FUNCS = {  # f and its derivative from (x, y), by hand
    "sigmoid": (torch.sigmoid, lambda x, y: y * (1 - y)),
    "tanh": (torch.tanh, lambda x, y: 1 - y * y),
    "exp(-x)": (lambda x: torch.exp(-x), lambda x, y: -y),
    "erf": (torch.erf, lambda x, y: 2 / torch.pi ** 0.5 * torch.exp(-x * x)),
}
POINTS = [-80.0, -30.0, -12.0, -3.0, 0.0, 0.7, 3.0, 12.0, 30.0, 80.0]


def planted(name: str, delta: torch.Tensor | None):
    f, d = FUNCS[name]

    class Fn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = f(x)
            ctx.save_for_backward(x, y)
            return y

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            right = g * d(x, y)
            return right if delta is None else right + delta.to(right.dtype)

    return Fn.apply


@settings(max_examples=max(1, settings.default.max_examples), deadline=None)
@given(st.sampled_from(sorted(FUNCS)), st.lists(st.sampled_from(POINTS), min_size=1, max_size=4),
       st.data())
@example("sigmoid", [30.0, 30.0], None)
@example("sigmoid", [30.0, 80.0], None)
def test_far_off_backward_disagrees_right_one_never(name, pts, data):
    x = torch.tensor(pts, dtype=torch.float64)
    n = len(pts)
    if data is None:  # the explicit examples: every element off, v all ones
        v, off = torch.ones(n, dtype=torch.float64), list(range(n))
    else:
        v = torch.tensor(data.draw(st.lists(st.sampled_from([1.0, -2.0, 0.5]), min_size=n,
                                            max_size=n)), dtype=torch.float64)
        off = data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n, unique=True))
    right = gradarg.compare_vjp(planted(name, None), x, v)
    assert right.status in ("agree", "could not check"), (name, pts, str(right))
    delta = torch.zeros(n, dtype=torch.float64)
    f, d = FUNCS[name]
    y = f(x)
    # 1e-3 of the largest |v_i| max(1, |y_i|, |f'(x_i)|): every output's rounding over any
    # step is far below it (exp(-x) at [-30, -80]: the rounding of e^80 along x[0] hides a
    # change of 1e10 in e^30's derivative; no check can see it)
    scale = torch.maximum(y.abs(), d(x, y).abs()).clamp_min(1.0)
    delta[off] = 1e-3 * float((v.abs() * scale).max())
    wrong = gradarg.compare_vjp(planted(name, delta), x, v)
    assert wrong.status == "DISAGREE", (name, pts, off, str(wrong))


def test_large_output_bound_says_could_not_check_inside_and_disagree_outside():
    """3·sum(x) at x = [0, 1e300]: no step along x[0] moves the output (3e300), so the
    derivative 3 is unresolved there, bounded by the output's rounding (~1e289): the right
    backward cannot be checked at x[0]; one that returns 1e295 there is beyond any bound."""

    def fn_with(first: float):
        class F(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return 3 * x.sum()

            @staticmethod
            def backward(ctx, g):
                return g * torch.tensor([first, 3.0], dtype=torch.float64)

        return F.apply

    x = torch.tensor([0.0, 1e300], dtype=torch.float64)
    v = torch.tensor(1.0, dtype=torch.float64)
    right = gradarg.compare_vjp(fn_with(3.0), x, v)
    assert right.status == "could not check" and "x[0] = 0" in right.note, str(right)
    far = gradarg.compare_vjp(fn_with(1e295), x, v)
    assert far.status == "DISAGREE", str(far)
    assert "bound it" in far.note and "x[0] = 0" in far.note, far.note
