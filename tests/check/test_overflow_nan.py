"""A backward that is NaN or infinite in float32 only, through an overflow: right formula, not
WRONG; one NaN in float64 too, or off elsewhere, still is.

``tanh(exp(x))`` at ``x = 100`` in float32: ``exp(100)`` is ``inf``, ``tanh(inf) = 1``, and the
chain rule gives ``(1 - 1²) · inf = 0 · inf = NaN``, autograd's own backward included, where
the derivative is 0 (and float64 computes it).  Before, ``check_backward`` called the right
backward of a custom Function WRONG there ("passes a gradient where ∂y/∂t is zero"), and
``compare_vjp`` said DISAGREE without a word on why (the random property sweep of
``test_fd_reliability`` found the first).  Invariants over generated points, some past float32's
``exp`` overflow (88.7) and some ordinary:

- the right backward (autograd's, and a Function's written by hand) is never WRONG /
  DISAGREE; where an element overflowed, a note says so (``overflow``, ``float64``);
- a backward off by a factor 3 is WRONG / DISAGREE whenever an ordinary point is checked;
- a backward NaN at the large points on float64 copies too (a planted NaN) is WRONG /
  DISAGREE: the float64 run is what excuses an overflow;
- past float64's overflow too (``x = 1000``) nothing tells an overflow from a formula
  undefined there: the backward's NaN is WRONG / DISAGREE, said as NaN (pattern
  ``"non-finite"``, a note of compare_vjp), never as a gradient where the forward is flat.

Truth by hand: the derivatives below, from the functions' formulas.
"""

from __future__ import annotations

import torch
from hypothesis import example, given
from hypothesis import strategies as st

import gradarg

FUNCS = {  # f, and its derivative by hand in the same float arithmetic as autograd's chain
    "tanh(exp)": (lambda x: torch.tanh(torch.exp(x)),
                  lambda x: (1 - torch.tanh(torch.exp(x)) ** 2) * torch.exp(x)),
    "sigmoid(exp)": (lambda x: torch.sigmoid(torch.exp(x)),
                     lambda x: torch.sigmoid(torch.exp(x)) * (1 - torch.sigmoid(torch.exp(x)))
                     * torch.exp(x)),
    "exp(-exp)": (lambda x: torch.exp(-torch.exp(x)),
                  lambda x: -torch.exp(-torch.exp(x)) * torch.exp(x)),
}
LARGE = [90.0, 100.0, 300.0]  # exp overflows float32, not float64
ORDINARY = [-2.0, -0.5, 0.25, 0.8, 1.5]


def by_hand(name: str, how: str | None):
    f, df = FUNCS[name]

    class Hand(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return f(x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            d = df(x)
            if how == "scale":
                d = 3 * d
            elif how == "nan":  # NaN at the large points in any dtype: a wrong formula there
                d = torch.where(x > 50, torch.full_like(d, float("nan")), d)
            return g * d

    return Hand.apply


points = st.lists(st.sampled_from(LARGE + ORDINARY), min_size=1, max_size=4)


def _large(vals):
    return [v for v in vals if v in LARGE]


@given(st.sampled_from(sorted(FUNCS)), points, st.booleans())
@example("tanh(exp)", [-2.0, 100.0], True)
@example("tanh(exp)", [100.0], False)
def test_right_backward_never_wrong(name, vals, hand):
    x = torch.tensor(vals, dtype=torch.float32, requires_grad=True)
    fn = by_hand(name, None) if hand else FUNCS[name][0]
    r = gradarg.check_backward(fn, x)
    assert r.status != "wrong", (name, vals, hand, r.summary)
    c = gradarg.compare_vjp(fn, x, torch.ones(len(vals)))
    assert c.status != "DISAGREE", (name, vals, hand, c.note)
    if hand and r.status == "agree" and _large(vals):
        assert "overflow" in r.summary and any("float64" in n for n in r.notes), r.summary
    assert x.grad is None


@given(st.sampled_from(sorted(FUNCS)), points, st.sampled_from(ORDINARY))
@example("tanh(exp)", [100.0], 0.8)
def test_factor_three_is_wrong(name, vals, ordinary):
    vals = [*vals, ordinary]  # one point where the derivative is far from 0
    x = torch.tensor(vals, dtype=torch.float32, requires_grad=True)
    fn = by_hand(name, "scale")
    r = gradarg.check_backward(fn, x)
    assert r.status == "wrong", (name, vals, r.summary)
    c = gradarg.compare_vjp(fn, x, torch.ones(len(vals)))
    assert c.status == "DISAGREE", (name, vals, c.status, c.note)


@given(st.sampled_from(sorted(FUNCS)), points)
@example("tanh(exp)", [100.0, 0.8])
def test_nan_in_float64_too_is_wrong(name, vals):
    if not _large(vals):
        vals = [*vals, 100.0]
    x = torch.tensor(vals, dtype=torch.float32, requires_grad=True)
    fn = by_hand(name, "nan")
    r = gradarg.check_backward(fn, x)
    assert r.status == "wrong", (name, vals, r.summary)
    c = gradarg.compare_vjp(fn, x, torch.ones(len(vals)))
    assert c.status == "DISAGREE", (name, vals, c.status, c.note)


@given(st.sampled_from(sorted(FUNCS)), st.booleans(), st.sampled_from([torch.float32,
                                                                       torch.float64]))
@example("tanh(exp)", True, torch.float64)
def test_overflow_in_float64_too_is_said_as_nan(name, hand, dtype):
    x = torch.tensor([1000.0, 0.5], dtype=dtype, requires_grad=True)
    fn = by_hand(name, None) if hand else FUNCS[name][0]
    r = gradarg.check_backward(fn, x)
    if r.status == "wrong":
        pair = r.pairs[0]
        assert pair.pattern == "non-finite" and "NaN" in r.summary, r.summary
        assert "straight-through" not in r.summary, r.summary
    else:
        assert r.status == "could-not-check", r.summary
    c = gradarg.compare_vjp(fn, x, torch.ones(2, dtype=dtype))
    assert c.status == "DISAGREE" and "NaN or infinite at x[0] = 1000" in c.note, c.note
