"""A batched route's NaN at a finite point is not returned as the Jacobian.

torch's batching rules (``torch.func.vmap`` and ``is_grads_batched``) can give non-finite
derivatives where the plain formulas are finite.  Found by a blind case (``tests/fuzz``,
seventh set, pytorch/pytorch#149694): the Hessian of ``det(x @ A)`` taken as the Jacobian of a
``create_graph=True`` Jacobian is all NaN in torch 2.13 wherever ``x @ A`` has equal singular
values (``torch.func.hessian`` too), while nested plain passes
(``torch.autograd.functional.jacobian``, looping) give the right constant Hessian.

The invariants: a Jacobian with one row is one plain backward pass (its ``create_graph``
graph is the plain one); and a batched result with non-finite entries at a finite point is
recomputed with plain passes, the Jacobians ``fn`` takes with gradarg included.  Expected
values come from torch's nested loops and, for det of a 2 x 2 or 3 x 3 product, from its
known Hessian (a constant for 2 x 2: d2 det / dx00 dx11 = 1, d2 det / dx01 dx10 = -1).
"""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import gradarg

D = torch.float64


def _rotation(theta: float, n: int) -> torch.Tensor:
    """A rotation in the plane of the first two coordinates of R^n."""
    r = torch.eye(n, dtype=D)
    c, s = math.cos(theta), math.sin(theta)
    r[0, 0], r[0, 1], r[1, 0], r[1, 1] = c, -s, s, c
    return r


def _hessian_by_loops(f, x):
    """torch alone: nested Jacobians of plain backward passes (no batching)."""
    return torch.autograd.functional.jacobian(
        lambda t: torch.autograd.functional.jacobian(f, t, create_graph=True), x)


@settings(max_examples=25, deadline=None)
@given(theta=st.floats(0.0, 2 * math.pi), scale=st.floats(0.2, 3.0),
       n=st.sampled_from([2, 3]), seed=st.integers(0, 2**16), rows=st.sampled_from([1, 2]))
def test_nested_jacobian_of_det_at_equal_singular_values_is_finite(theta, scale, n, seed,
                                                                  rows):
    gen = torch.Generator().manual_seed(seed)
    a = torch.randn(n, n, generator=gen, dtype=D) + 3 * torch.eye(n, dtype=D)
    b = torch.randn(n, n, generator=gen, dtype=D) + 3 * torch.eye(n, dtype=D)
    # x @ a = scale * rotation: every singular value of the product equals scale
    x = scale * _rotation(theta, n) @ torch.linalg.inv(a)

    def f(t):
        d = torch.det(t @ a)
        return d if rows == 1 else torch.stack([d, torch.det(t @ a @ b)])

    expected = _hessian_by_loops(f, x)
    assert torch.isfinite(expected).all()
    got = gradarg.jacobian(lambda t: gradarg.jacobian(f, t, create_graph=True), x)
    torch.testing.assert_close(got, expected, rtol=1e-8, atol=1e-8)


def test_det_hessian_of_a_2x2_product_is_the_constant_one():
    a = torch.tensor([[1.0, 0.0], [-1.0, 1.0]], dtype=D)  # det(a) = 1
    x = torch.tensor([[1.0, 0.0], [1.0, 1.0]], dtype=D)  # x @ a = I
    got = gradarg.jacobian(lambda t: gradarg.jacobian(lambda s: torch.det(s @ a), t,
                                                      create_graph=True), x)
    expected = torch.zeros(2, 2, 2, 2, dtype=D)  # det(x) = x00 x11 - x01 x10
    expected[0, 0, 1, 1] = expected[1, 1, 0, 0] = 1.0
    expected[0, 1, 1, 0] = expected[1, 0, 0, 1] = -1.0
    torch.testing.assert_close(got, expected)


def test_one_row_keeps_the_plain_graph_for_torchs_own_batched_outer():
    """A gradient (one row) taken with create_graph=True, differentiated by torch itself
    with its batched route: finite only if gradarg's graph is the plain one."""
    a = torch.tensor([[1.0, 0.0], [-1.0, 1.0]], dtype=D)
    x = torch.tensor([[1.0, 0.0], [1.0, 1.0]], dtype=D)

    def f(t):
        return torch.det(t @ a)

    got = torch.autograd.functional.jacobian(
        lambda t: gradarg.jacobian(f, t, create_graph=True), x, vectorize=True)
    torch.testing.assert_close(got, _hessian_by_loops(f, x))


def test_a_genuine_nan_stays_and_the_caller_is_untouched():
    """sqrt at 0: an infinite derivative that plain passes give too; x unchanged."""
    x = torch.tensor([0.0, 1.0, 4.0], dtype=D)
    before = x.clone()
    got = gradarg.jacobian(lambda t: torch.sqrt(t) * 2, x)
    assert torch.isinf(got[0, 0]) and got[1, 1] == 1.0 and got[2, 2] == 0.5
    assert torch.equal(x, before) and x.grad is None
    assert gradarg.core.choose._UNBATCHED.get() is False


class _NanWhenBatched(torch.autograd.Function):
    """x**2 whose backward is right when run plainly and NaN when torch batches it: a
    stand-in for a wrong batching rule (the test's only use of a private torch name)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        if torch._C._functorch.is_batchedtensor(g):
            return g * float("nan")
        return 2 * x * g


def test_a_batched_nan_at_a_finite_point_is_recomputed_with_plain_passes():
    x = torch.tensor([0.5, -1.0, 2.0], dtype=D)
    calls = []

    def f(t):
        calls.append(1)
        return _NanWhenBatched.apply(t) * 3

    got = gradarg.jacobian(f, x)
    torch.testing.assert_close(got, torch.diag(6 * x))
    assert len(calls) == 2  # the batched evaluation, then the plain one
    # the gradarg Jacobians fn takes are recomputed plainly too
    inner = gradarg.jacobian(lambda t: gradarg.jacobian(f, t, create_graph=True).sum(0), x)
    torch.testing.assert_close(inner, torch.diag(torch.full((3,), 6.0, dtype=D)))
    assert gradarg.core.choose._UNBATCHED.get() is False


def test_one_row_is_one_plain_pass():
    """A gradient (one row) is never batched: fn runs once, and no rule of a batch applies."""
    x = torch.tensor([0.5, -1.0, 2.0], dtype=D)
    calls = []

    def f(t):
        calls.append(1)
        return _NanWhenBatched.apply(t).sum()

    torch.testing.assert_close(gradarg.jacobian(f, x), 2 * x)
    assert len(calls) == 1


@settings(max_examples=60, deadline=None)
@given(shape=st.lists(st.integers(1, 6), min_size=0, max_size=3), seed=st.integers(0, 2**16),
       bad=st.sampled_from([float("nan"), float("inf"), -float("inf"), None]),
       dtype=st.sampled_from([torch.float32, torch.float64, torch.complex64]))
def test_the_finiteness_test_misses_no_nan_or_inf(shape, seed, bad, dtype):
    """The recomputation's test (one sum per block) says False whenever an entry is NaN or
    infinite, and True for entries far from overflow."""
    gen = torch.Generator().manual_seed(seed)
    b = torch.randn(tuple(shape), generator=gen, dtype=dtype) * 1e3
    if bad is not None:
        b.view(-1)[int(torch.randint(b.numel(), (1,), generator=gen))] = bad
    finite = gradarg.core.choose._finite([[torch.zeros(2), b]])
    assert finite == bool(torch.isfinite(b).all())


def test_vectorize_true_refuses_a_det_graph_it_would_batch_wrongly():
    """vectorize=True asks for a batched call only: with create_graph over a det backward
    both batched paths (vmap, is_grads_batched) refuse, where the second used to return a
    graph whose derivative is NaN."""
    a = torch.tensor([[1.0, 0.0], [-1.0, 1.0]], dtype=D)
    x = torch.tensor([[1.0, 0.0], [1.0, 1.0]], dtype=D)

    def f(t):
        return torch.stack([torch.det(t @ a), 2 * torch.det(t @ a)])

    with pytest.raises(gradarg.VectorizationError, match="LinalgDetBackward0"):
        gradarg.jacobian(f, x.clone().requires_grad_(), create_graph=True, vectorize=True)
