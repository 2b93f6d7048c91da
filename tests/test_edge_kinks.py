"""Kinks within the finite-difference steps but beside ``x`` (the fuzz report of issue 44):
``abs`` at ``x = 1e-12``, ``relu`` at ``1e-9``, ``clamp`` at ``1 + 1e-10``.  Every step is
larger than the distance to the kink, so ``(f(x+h) - f(x-h)) / 2h`` is ``x/h`` there, and
the reference called it a kink at ``x`` (the midpoint, 1.3e-8 for ``abs``' derivative 1):
``jacobian(method='finite-difference')`` returned it with no warning, and a wrong backward
(``2·sign(x)``) "agreed".

Invariant: a kink is a kink at ``x`` only when the central estimates converge over the steps
(``abs`` at 0: the same at every step); beside ``x`` the entry is unresolved: NaN and a
warning from ``jacobian``, "could not check" (never "agree" for a wrong backward) from the
checkers.  Oracle: ``torch.func.jacrev``, and at a kink exactly the interval of one-sided
derivatives (written by hand).
"""

from __future__ import annotations

import warnings

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import gradarg

F64 = torch.float64
# f, its kink, its one-sided derivatives there (left, right), its derivative elsewhere
KINKS = {
    "abs": (torch.abs, 0.0, (-1.0, 1.0), lambda t: torch.sign(t)),
    "relu": (torch.relu, 0.0, (0.0, 1.0), lambda t: (t > 0).double()),
    "clamp": (lambda t: t.clamp(-1.0, 1.0), 1.0, (1.0, 0.0),
              lambda t: ((t > -1) & (t < 1)).double()),
}
offsets = st.sampled_from([0.0, 1e-15, -1e-15, 1e-12, -1e-12, 1e-10, -1e-10, 1e-9, -1e-9,
                           1e-6, -1e-6, 1e-3, 0.5, -0.5,
                           # a few spacings of float64 beside the kink (the long profile's
                           # clamp at 1 + 1e-15), and far below every step
                           2.3e-16, -2.3e-16, 1e-300, -1e-300, 5e-324])


def twice(name):
    f, at, _, d = KINKS[name]

    class Wrong(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return f(x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            # wrong everywhere: off the kink 2·f' + 0.5, at it 3 (outside every subgradient)
            return g * torch.where(x == at, torch.full_like(x, 3.0), 2 * d(x) + 0.5)

    return Wrong.apply


@settings(max_examples=max(1, settings.default.max_examples // 2), deadline=None)
@given(st.sampled_from(sorted(KINKS)), st.lists(offsets, min_size=1, max_size=3))
def test_near_a_kink_the_jacobian_is_right_or_nan(name, offs):
    f, at, (left, right), d = KINKS[name]
    x = at + torch.tensor(offs, dtype=F64)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        jac = gradarg.jacobian(f, x, method="finite-difference").diagonal()
    nan = torch.isnan(jac)
    assert bool(nan.any()) == any("could not resolve" in str(w.message) for w in caught)
    exact = x == at
    want = d(x)  # jacrev's value away from the kink (checked against it below)
    assert torch.equal(want[~exact], torch.func.jacrev(f)(x).diagonal()[~exact])
    lo, hi = min(left, right), max(left, right)
    ok = nan | (exact & (jac >= lo - 1e-9) & (jac <= hi + 1e-9)) | (
        ~exact & ((jac - want).abs() <= 1e-6))
    assert bool(ok.all()), (name, offs, jac, want)


@settings(max_examples=max(1, settings.default.max_examples // 4), deadline=None)
@given(st.sampled_from(sorted(KINKS)), st.lists(offsets, min_size=1, max_size=2))
def test_near_a_kink_a_wrong_backward_never_agrees(name, offs):
    _, at, _, _ = KINKS[name]
    x = at + torch.tensor(offs, dtype=F64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c = gradarg.compare_vjp(twice(name), x, torch.ones_like(x))
        r = gradarg.check_backward(twice(name), x.clone().requires_grad_())
    assert c.status != "agree", (name, offs, str(c))
    assert r.status != "agree", (name, offs, r.summary)


def test_the_long_profiles_examples_are_unresolved_not_a_kink_at_x():
    # clamp at 1 + 1e-15 (its derivative 0) was a kink at x: the midpoint 0.5, and a wrong
    # backward (0.5) agreed; abs at -1e-300 (derivative -1) and abs(t) + 1 at 0 (a kink at 0
    # or at 1e-300: the same values at every float) were 0
    cases = [(lambda t: t.clamp(-1.0, 1.0), 1 + 1e-15), (torch.abs, -1e-300),
             (lambda t: t.abs() + 1, 0.0)]
    for f, at in cases:
        x = torch.tensor([at], dtype=F64)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            jac = gradarg.jacobian(f, x, method="finite-difference")
        assert bool(torch.isnan(jac).all()), (at, jac)
        assert any("could not resolve" in str(w.message) for w in caught)
    # a kink at x itself is still one: abs and relu at 0, clamp at 1 (midpoints)
    for f, at, mid in [(torch.abs, 0.0, 0.0), (torch.relu, 0.0, 0.5),
                       (lambda t: t.clamp(-1.0, 1.0), 1.0, 0.5)]:
        jac = gradarg.jacobian(f, torch.tensor([at], dtype=F64), method="finite-difference")
        assert abs(float(jac) - mid) <= 1e-9, (at, jac)


def test_kink_at_x_tolerance_planted_just_inside_and_just_outside():
    # a kink at x0 = 2**-10 whose one-sided slopes over every step are +1 and -1 (gap 2),
    # but alpha times those within 1e-15 of x0, where the probe one spacing away looks:
    # kink at x when |alpha - 1| <= a quarter of the gap (0.5), else unresolved (NaN)
    x0 = 2.0**-10

    def f(alpha):
        def g(t):
            d = t - x0
            return d.abs() * torch.where(d.abs() < 1e-15, torch.full_like(d, alpha),
                                         torch.ones_like(d))
        return g

    x = torch.tensor([x0], dtype=F64)
    inside = gradarg.jacobian(f(0.51), x, method="finite-difference")  # off by 0.49
    assert float(inside) == 0.0, inside  # the midpoint of -1 and 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outside = gradarg.jacobian(f(0.49), x, method="finite-difference")  # off by 0.51
    assert bool(torch.isnan(outside).all()), outside
