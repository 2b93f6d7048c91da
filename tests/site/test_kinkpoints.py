"""The kinks page's probe (``docs/_pages/kinkpoints.py``) against functions whose one-sided
slopes are known by construction: a kink at a generated point with generated slopes, on the
side a generated comparison puts it; a step; a square root; a smooth function; and a wrong
backward, which must be told from either side."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "docs" / "_pages"))
import kinkpoints

slopes = st.floats(-4.0, 4.0).filter(lambda s: abs(s) > 1e-3).map(lambda s: round(s, 3))


@settings(max_examples=60, deadline=None)
@given(a=slopes, b=slopes, c=st.sampled_from([p for p in kinkpoints.POINTS if p != 0.0 or
                                               math.copysign(1, p) > 0]),
       strict=st.booleans())
def test_a_kink_is_found_with_its_two_slopes_and_the_side_torch_takes(a, b, c, strict):
    """f = a·x left of c, b·x right of it (continuous at c); torch's derivative at c is the
    slope of the branch the comparison puts c in: ``x < c`` puts it right, ``x <= c`` left."""
    if abs(a - b) < 0.01:
        return

    def f(x):
        left = (x <= c) if strict else (x < c)
        return torch.where(left, a * x, b * x + (a - b) * c)

    rows = kinkpoints.special("kink", f)
    at_c = [r for r in rows if r.x == c]  # at 0, both signed zeros
    assert len(at_c) == len(rows) == (2 if c == 0.0 else 1)
    r = at_c[0]
    assert r.left.kind == r.right.kind == "finite"
    assert abs(r.left.value - a) < 1e-6 and abs(r.right.value - b) < 1e-6
    assert r.verdict == ("left side" if strict else "right side")
    assert r.torch_grad == (a if strict else b)


def test_a_step_is_a_jump_on_one_side_and_zero_slope_on_the_other():
    rows = kinkpoints.special("step", lambda x: x * 0 + (x >= 1.0).double())
    (r,) = [r for r in rows if r.x == 1.0]
    assert r.left.kind == "jump" and r.right.kind == "finite" and r.right.value == 0
    assert r.torch_grad == 0 and r.verdict == "right side"
    assert all(r.x == 1.0 for r in rows)


def test_a_square_root_has_an_infinite_side_at_zero_and_nan_values_below():
    rows = kinkpoints.special("sqrt", torch.sqrt)
    (zero,) = [r for r in rows if r.x == 0.0 and math.copysign(1, r.x) > 0]
    assert zero.left.kind == "undefined" and zero.right.kind == "inf" and zero.right.value > 0
    assert zero.torch_grad == math.inf and zero.verdict == "that side's ∞"
    below = [r.x for r in kinkpoints.outside(rows)]
    assert below == [p for p in kinkpoints.POINTS if p < 0]
    assert "`sqrt` | -6, -3, -2, -1, -0.5 | nan |" in kinkpoints.markdown_outside(rows)


def test_a_smooth_function_has_no_listed_point():
    assert kinkpoints.special("sin", torch.sin) == []
    assert kinkpoints.special("tanh", torch.tanh) == []


class TwiceTheSlope(torch.autograd.Function):
    """sin with a backward that returns twice cos: right nowhere except where cos is 0."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sin()

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * g * x.cos()


def test_a_wrong_backward_is_neither_side():
    rows = kinkpoints.special("wrong", TwiceTheSlope.apply)
    assert {r.x for r in rows} == set(kinkpoints.POINTS)
    assert all(r.verdict == "other" for r in rows)


def test_elementwise_selection_leaves_out_random_and_non_elementwise_functions():
    class Op:
        def __init__(self, name, fn):
            self.name, self.fn, self.variant_test_name, self.supports_autograd = name, fn, "", True

        def get_op(self):
            return self.fn

    ops = [Op("sin", torch.sin), Op("cumsum", lambda x: x.cumsum(0)),
           Op("noise", lambda x: x + torch.randn_like(x)), Op("clone", torch.clone),
           Op("mean", lambda x: x.mean())]
    assert [name for name, _ in kinkpoints.candidates(ops)] == ["sin"]


@pytest.mark.parametrize(("name", "point", "verdict"),
                         [("abs", 0.0, "mean of the sides"), ("relu", 0.0, "left side")])
def test_two_operators_of_torch_by_hand(name, point, verdict):
    """|x| has slopes -1 and 1 at 0 and torch returns 0; relu's are 0 and 1, torch 0."""
    fn = torch.abs if name == "abs" else torch.relu
    (r,) = [r for r in kinkpoints.special(name, fn, points=(point,))]
    assert r.verdict == verdict and r.torch_grad == 0


@settings(max_examples=30, deadline=None)
@given(p=st.sampled_from(kinkpoints.POINTS))
def test_a_tie_of_two_inputs_gives_each_partial_its_sides(p):
    """f = x where x >= y, else y: at a tie torch sends the whole gradient to x (the branch
    taken), which is x's right side (moving x up keeps f = x) and y's left side (moving y
    down keeps f = x, slope 0)."""
    rows = kinkpoints.ties("max by hand", lambda x, y: torch.where(x >= y, x, y), points=(p,))
    (r,) = rows
    (xl, xr), (yl, yr) = r.sides
    slopes = (xl.value, xr.value, yl.value, yr.value)
    assert all(abs(a - b) < 1e-6 for a, b in zip(slopes, (0.0, 1.0, 0.0, 1.0), strict=True))
    assert r.grads == (1.0, 0.0) and r.verdicts == ("right side", "left side")


def test_torch_maximum_splits_a_tie_and_smooth_sums_are_not_listed():
    (r,) = kinkpoints.ties("maximum", torch.maximum, points=(1.0,))
    assert r.grads == (0.5, 0.5) and r.verdicts == ("mean of the sides", "mean of the sides")
    assert kinkpoints.ties("add", torch.add) == []
    assert kinkpoints.ties("mul", torch.mul) == []


def test_calls_with_their_own_bounds_are_tried_at_those_bounds():
    """logit with eps=1e-3 has its kinks at 1e-3 and 1 - 1e-3, which POINTS does not hold:
    the extra calls are tried there too, and clamp(x, 0, 1) shows both of its bounds."""
    rows = kinkpoints.table([], extra=True)
    logit = {r.x for r in rows if r.op == "torch.logit(x, eps=1e-3)"}
    assert {1e-3, 1 - 1e-3} <= logit
    clamp = [r for r in rows if r.op == "clamp(x, 0, 1)"]
    assert {r.x for r in clamp} == {0.0, 1.0}
    for r in clamp:  # slopes 0 outside [0, 1], 1 inside, by construction
        inside, outside = (r.right, r.left) if r.x == 0 else (r.left, r.right)
        assert abs(inside.value - 1) < 1e-6 and abs(outside.value) < 1e-6
