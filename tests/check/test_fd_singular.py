"""Property tests: a singularity or domain edge closer to ``x`` than the reference's steps
(issue 44's last finding: ``log1p`` at ``x = -0.999`` in float32, a factor-2 backward called
"could not check").

**Invariant** (``src/gradarg/core/fd_edge.py``): *a reference that meets non-finite values at
its coarse steps goes on to finer steps until it has enough finite ones to settle, or the
precision floor; it resolves an entry whenever a finite neighbourhood of x at least as wide as
its finest usable steps exists, and a wrong backward is then WRONG, a correct one never is.*

The class: ``log``, ``sqrt`` and ``1 / t`` shifted to ``t - a``, ``log1p(±t / s)``,
``acos(t / s)`` and ``asin(t / s)`` (``s`` a power of 2), with the edge or pole at a distance
``d·|x|`` from ``x``, ``d`` from ``1e-4`` to ``1e-1``, ``|x|`` from ``1e-3`` to ``1e3``, on
either side, in float32 and float64.  Every operation before the singular one is exact in the
input's dtype (``t - a`` with ``a`` within a factor 2 of ``t``; a division by a power of 2),
so a correct float32 backward is right to float32's rounding.  Expected derivatives come from
``torch.func.grad`` in float64, never from the code under test.

The honest bound (measured with these functions, ``|x|`` from ``1e-3`` to 500, both sides):
the non-finite class is resolved whenever ``d·|x| >= 16 · FLOOR`` with ``FLOOR = C·eps·max(1,
|x|) / UNRESOLVED`` (float64's ``eps``: ``3.6e-13 · max(1, |x|)``, the finest step at which
rounding of ``x + h`` leaves a derivative resolvable), and at ``8 · FLOOR`` some are not.
Inside the range above, ``d·|x| / FLOOR`` is at least ``2.8e5``: every entry must be resolved.
A pole crossed with finite values (``1 / (t - a)``) is resolved down to ``2**-12`` times the
table's finest step (``core/fd_edge.py``), far below ``1e-4 |x|`` here.

Generated cases: the hypothesis profile's (``tests/conftest.py``; ``GRADARG_HYPOTHESIS=long``
for a long run by hand).
"""

from __future__ import annotations

import math
import warnings

import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st

import gradarg

C_ROUND, UNRESOLVED = 16.0, 0.01  # core/fd_error.py, core/fd_settle.py (the stated floor)
FLOOR64 = C_ROUND * torch.finfo(torch.float64).eps / UNRESOLVED  # times max(1, |x|)
NONFINITE = ["acos", "asin", "log", "log1p", "sqrt"]  # not finite beyond the edge
CLASS = [*NONFINITE, "recip"]  # and a pole crossed with finite values


def examples(n: int) -> settings:
    """``n`` examples in the default profile (25 there), scaled with the profile."""
    return settings(max_examples=max(1, n * settings.default.max_examples // 25))


def build(name: str, mag: float, gap: float, side: int, dtype: torch.dtype):
    """``(fn, x)``: ``fn`` has its edge (or pole) at a distance ``gap`` (absolute, about:
    rounded to ``dtype``) from ``x``, with ``|x|`` about ``mag``; ``side`` = 1: the edge below
    ``x``.  Every operation before the singular one is exact in ``dtype``."""
    s = 2.0 ** math.floor(math.log2(mag))
    if name in ("log1p", "acos", "asin"):
        # edge of u = ±t/s at -1 (log1p) or +1 / -1 (acos, asin); x = ∓s (1 - gap / s)
        one = -1.0 if name == "log1p" else 1.0
        edge = side * one * s  # the edge in t
        x = float(torch.tensor(edge * (1 - gap / s), dtype=dtype))
        sign = side * one  # u = t / (sign * s): 1 - gap/s at x for acos / asin, -1 + .. for log1p
        op = {"log1p": torch.log1p, "acos": torch.acos, "asin": torch.asin}[name]
        if name == "log1p":
            return (lambda t: op(-t / (sign * s))), x
        return (lambda t: op(t / (sign * s))), x
    x = float(torch.tensor(side * mag, dtype=dtype))
    a = float(torch.tensor(x - side * gap, dtype=dtype))
    if name == "log":
        return (lambda t: torch.log(side * (t - a))), x
    if name == "sqrt":
        return (lambda t: torch.sqrt(side * (t - a))), x
    return (lambda t: 1 / (t - a)), x


class Scaled(torch.autograd.Function):
    """``fn`` elementwise, with autograd's own derivative (recomputed in backward) times
    ``factor``: correct at 1."""

    @staticmethod
    def forward(ctx, x, fn, factor):
        ctx.save_for_backward(x)
        ctx.fn, ctx.factor = fn, factor
        with torch.no_grad():
            return fn(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        d = torch.func.vmap(torch.func.grad(ctx.fn))(x.detach())
        return ctx.factor * g * d, None, None


def _check(fn, x: torch.Tensor, factor: float, where, resolved: bool = True):
    """The checker's verdicts on ``fn``'s backward times ``factor``: the invariant.
    ``resolved=False`` (a pole crossed with finite values, which the checkers' references do
    not step past): never WRONG / DISAGREE when right, never "agree" when scaled."""
    r = gradarg.check_backward(lambda t: Scaled.apply(t, fn, factor), x.clone().requires_grad_())
    c = gradarg.compare_vjp(lambda t: Scaled.apply(t, fn, factor), x, torch.ones_like(x))
    if not resolved:
        if factor == 1.0:
            assert r.status != "wrong" and c.status != "DISAGREE", (where, r.summary, str(c))
        else:
            assert r.status != "agree" and c.status != "agree", (where, r.summary, str(c))
    elif factor == 1.0:
        assert r.status == "agree", (where, r.summary)
        assert c.status == "agree" and c.agree, (where, str(c))
    else:
        assert r.status == "wrong", (where, r.summary)
        assert c.status == "DISAGREE", (where, str(c))


@examples(6)
@given(st.sampled_from(CLASS), st.floats(-4.0, -1.0), st.floats(-3.0, 3.0),
       st.sampled_from([1, -1]), st.sampled_from([torch.float32, torch.float64]),
       st.sampled_from([1.0, 2.0, 0.5]))
# the long profile's finding (issue 44): log1p at -0.999 in float32, a factor 2
@example("log1p", -3.0, 0.0, 1, torch.float32, 2.0)
# a pole crossed with finite values at the table's coarse steps (could not check before)
@example("recip", -4.0, 0.0, 1, torch.float64, 2.0)
@example("recip", -4.0, -3.0, -1, torch.float32, 1.0)
def test_an_edge_closer_than_the_steps_is_resolved(name, log_d, log_mag, side, dtype, factor):
    mag = 10.0**log_mag
    fn, xv = build(name, mag, 10.0**log_d * mag, side, dtype)
    x = torch.tensor([xv], dtype=dtype)
    where = (name, xv, 10.0**log_d, dtype, factor)
    _check(fn, x, factor, where, resolved=name != "recip")
    # the reference itself (jacobian's steps past a pole crossed with finite values too): resolved (no NaN, no warning) and the derivative in float64
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        fd = gradarg.jacobian(fn, x, method="finite-difference").double().reshape(())
    true = torch.func.grad(fn)(x.double()[0])
    assert torch.allclose(fd, true, rtol=1e-3, atol=0), (where, fd, true)


@examples(4)
@given(st.sampled_from(NONFINITE), st.floats(math.log2(16), 20.0), st.floats(-3.0, 3.0),
       st.sampled_from([1, -1]), st.sampled_from([1.0, 2.0]))
@example("log", 4.0, 0.0, 1, 2.0)  # the stated bound itself: 16 · FLOOR
@example("acos", 4.0, -3.0, -1, 1.0)
def test_the_stated_bound_float64(name, log2_m, log_mag, side, factor):
    # an edge at 16 to 1e6 times the floor, in float64: resolved, so a factor is WRONG
    mag = 10.0**log_mag
    gap = 2.0**log2_m * FLOOR64 * max(1.0, mag)
    fn, xv = build(name, mag, gap, side, torch.float64)
    _check(fn, torch.tensor([xv], dtype=torch.float64), factor, (name, xv, gap, factor))


@pytest.mark.parametrize("name", ["sqrt", "acos"])
def test_an_edge_at_x_is_not_resolved_and_not_wrong(name):
    # f is not finite on one side at every step: the search goes to the floor and the entry
    # stays unresolved (a one-sided derivative that is infinite); never WRONG
    fn = torch.sqrt if name == "sqrt" else torch.acos
    x = torch.tensor([0.0 if name == "sqrt" else 1.0, 0.5], dtype=torch.float64)
    with pytest.warns(RuntimeWarning, match="finite-difference"):
        jac = gradarg.jacobian(fn, x, method="finite-difference")
    assert math.isnan(float(jac[0, 0])) and not math.isnan(float(jac[1, 1]))
    for factor in (1.0, 2.0):
        r = gradarg.check_backward(lambda t, f=factor: Scaled.apply(t, fn, f),
                                   x.clone().requires_grad_(), localize="full")
        # x[0] could not be checked; x[1] is: the factor there is WRONG
        assert r.status == ("could-not-check" if factor == 1.0 else "wrong"), r.summary
        assert "could not check" in r.summary and "t[0]" in r.summary, r.summary
        assert "t[1]" not in r.summary.split("could not check")[1].split(")")[0], r.summary


def test_entries_that_were_resolved_keep_their_estimate():
    # one column, two outputs: the first meets NaN at the coarse steps (log, edge 1e-3
    # below x = 1000), the second is resolved by the coarse steps only (1e8 + sin(t / 1000):
    # at the finer steps that the first needs, the rounding of 1e8 hides its derivative
    # 5.4e-4); only the first is re-estimated on finer steps, the second keeps its estimate
    x = torch.tensor([1000.0], dtype=torch.float64)
    a = 1000.0 - 1e-3

    def fn(t):
        return torch.stack([torch.log(t - a), 1e8 + torch.sin(t / 1000)]).reshape(2)

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # both resolved: no NaN, no warning
        jac = gradarg.jacobian(fn, x, method="finite-difference")
    true = torch.func.jacrev(fn)(x)
    assert torch.allclose(jac, true, rtol=1e-3, atol=0), (jac, true)


def test_no_extra_evaluation_where_every_step_is_finite():
    # the search runs only for entries that met a non-finite value or a pole: a clean
    # function is evaluated as often as before this change (f(x), five steps, one off-grid
    # step at |x| = 2, and the calls vmap makes: 9 on main before it), one 1e-3 from its edge
    # more often
    calls = []

    def counted(shift):
        def fn(t):
            calls.append(t.shape)
            return torch.log(t - shift)
        return fn

    x = torch.tensor([2.0], dtype=torch.float64)
    gradarg.jacobian(counted(0.0), x, method="finite-difference")
    assert len(calls) == 9, calls
    calls.clear()
    gradarg.jacobian(counted(2.0 - 1e-3), x, method="finite-difference")
    assert len(calls) > 9, calls
