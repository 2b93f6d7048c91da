"""gradarg.jacobian on a ``__torch_dispatch__`` tensor subclass, as PyTorch tests its own.

PyTorch's tests of ``torch.autograd.functional.jacobian`` (test/autograd/test_functional.py:
``test_jacobian_vectorize_correctness_*``, ``test_jacobian_output``, ``test_jacobian_scalar``,
``test_jacobian_err_check``, ``test_jacobian_create_graph``,
``test_jacobian_vectorize_raises_no_warnings``) run every case on plain tensors and on
``LoggingTensor`` (``torch.testing._internal.logging_tensor``), a wrapper subclass whose storage
cannot be read, with ``vectorize=True`` and ``False``.  The same functions and shapes here, written
for gradarg; every expected value comes from ``torch.autograd.functional.jacobian`` with
``vectorize=False`` (one backward pass per row), on the same kind of tensor.
"""

from __future__ import annotations

import warnings

import pytest
import torch
from torch.autograd import functional as AF

import gradarg

LoggingTensor = pytest.importorskip(
    "torch.testing._internal.logging_tensor", reason="torch's LoggingTensor moved"
).LoggingTensor


def plain(t: torch.Tensor) -> torch.Tensor:
    return t


def logging(t: torch.Tensor) -> torch.Tensor:
    return LoggingTensor(t)


WRAPS = pytest.mark.parametrize("wrap", [plain, logging], ids=["base_tensor", "logging_tensor"])


def _gen(*shape, dtype=torch.float32, seed=0):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


def _unwrap(t):
    if isinstance(t, tuple):
        return tuple(_unwrap(u) for u in t)
    return t.elem if isinstance(t, LoggingTensor) else t


def _assert_same(got, expected):
    got, expected = _unwrap(got), _unwrap(expected)
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected)
        for g, e in zip(got, expected, strict=True):
            _assert_same(g, e)
        return
    assert isinstance(got, torch.Tensor)
    assert got.shape == expected.shape
    torch.testing.assert_close(got, expected)


def simple(x):
    return 3 * x**2


def multi_input(x, y):
    return (x.cos() * x) @ y.sin()


def multi_output(x, y):
    return (x * x) @ y, x @ (x.sum(1) * y), y.sum()


def unrelated(x, y):
    return x, y, x, y


def zero_dim_out(x, y):
    return x.sum(), y.sum(), x * y


def zero_dim_in(x):
    return torch.stack([x, x, x])


def mixed_zero_dim(x, y):
    return y.sum(), x * y


def different_dtype(x, y):
    return (x * y).float(), (x * y).double()


CASES = {
    "simple": (simple, [(2, 3, 5)], True),
    "multi_input": (multi_input, [(2, 3), (3, 5)], True),
    "multi_input_multi_output": (multi_output, [(5, 3), (3, 5)], True),
    "unrelated_outputs": (unrelated, [(2,), (3,)], True),
    "zero_dim_output": (zero_dim_out, [(3,), (3,)], True),
    "zero_dim_input": (zero_dim_in, [()], True),
    "mixed_zero_dim": (mixed_zero_dim, [(), (1,)], True),
    # forward mode gives the output's dtype, reverse mode the input's: reverse only (as torch)
    "different_dtype": (different_dtype, [(3,), (3,)], False),
}


@WRAPS
@pytest.mark.parametrize("case", list(CASES))
def test_vectorize_correctness(case, wrap):
    """torch's ``_check_jacobian_vectorize_correctness``: vectorized reverse and forward mode
    agree with the loop of single backward passes."""
    fn, shapes, forward_too = CASES[case]
    xs = tuple(wrap(_gen(*s, seed=i)) for i, s in enumerate(shapes))
    x = xs[0] if len(xs) == 1 else xs
    expected = AF.jacobian(fn, x, vectorize=False)
    _assert_same(gradarg.jacobian(fn, x, vectorize=True), expected)
    _assert_same(gradarg.jacobian(fn, x, vectorize=True, strategy="reverse-mode"), expected)
    if forward_too:
        got = gradarg.jacobian(fn, x, strategy="forward-mode", vectorize=True)
        _assert_same(got, expected)


@WRAPS
@pytest.mark.parametrize("vectorize", [True, False])
def test_output(wrap, vectorize):
    def exp_reducer(x):
        return x.exp().sum(dim=1)

    x = wrap(_gen(4, 4).abs())
    res = gradarg.jacobian(exp_reducer, x, vectorize=vectorize)
    assert res.shape == (4, 4, 4) and res.grad_fn is None
    _assert_same(res, AF.jacobian(exp_reducer, x))

    x = wrap(_gen(4))
    res = gradarg.jacobian(lambda t: t.clone(), x, vectorize=vectorize)
    assert res.grad_fn is None
    torch.testing.assert_close(_unwrap(res), torch.eye(4))

    def add_exp_reducer(x, y):
        return (x + y.exp()).sum(dim=1)

    xs = (wrap(_gen(4, 4, seed=1)), wrap(_gen(4, 4, seed=2)))
    res = gradarg.jacobian(add_exp_reducer, xs, vectorize=vectorize)
    assert all(r.grad_fn is None and r.shape == (4, 4, 4) for r in res)
    _assert_same(res, AF.jacobian(add_exp_reducer, xs))


@WRAPS
@pytest.mark.parametrize("vectorize", [True, False])
def test_scalar(wrap, vectorize):
    x = wrap(_gen(4, 4))
    res = gradarg.jacobian(lambda t: t.sum(), x, vectorize=vectorize)
    torch.testing.assert_close(_unwrap(res), torch.ones(4, 4))

    x = wrap(_gen())
    res = gradarg.jacobian(lambda t: t.unsqueeze(0).repeat(4), x, vectorize=vectorize)
    torch.testing.assert_close(_unwrap(res), torch.ones(4))


@WRAPS
@pytest.mark.parametrize("vectorize", [True, False])
def test_structure(wrap, vectorize):
    """torch's ``test_jacobian_err_check``: nesting of the result, and the errors."""

    def foo(a):
        return 3 * a.narrow(0, 0, 3)

    x = wrap(_gen(4))
    with pytest.raises(TypeError):
        gradarg.jacobian(foo, (x, 2), vectorize=vectorize)
    with pytest.raises(TypeError):
        gradarg.jacobian(lambda a: (foo(a), "bar"), x, vectorize=vectorize)
    res = gradarg.jacobian(foo, x, vectorize=vectorize)
    assert res.shape == (3, 4)
    torch.testing.assert_close(_unwrap(res), 3 * torch.eye(3, 4))

    def foo2(a, b):
        return b, 3 * a.narrow(0, 0, 3)

    xs = (wrap(_gen(4)), wrap(_gen(5)))
    res = gradarg.jacobian(foo2, xs, vectorize=vectorize)
    assert [[b.shape for b in row] for row in res] == [[(5, 4), (5, 5)], [(3, 4), (3, 5)]]
    _assert_same(res, AF.jacobian(foo2, xs))


@WRAPS
@pytest.mark.parametrize("vectorize", [True, False])
def test_create_graph(wrap, vectorize):
    def exp_reducer(x):
        return x.exp().sum(dim=1)

    x = LoggingTensor(_gen(4, 4, dtype=torch.float64), requires_grad=True)
    if wrap is plain:
        x = _gen(4, 4, dtype=torch.float64).requires_grad_(True)
    res = gradarg.jacobian(exp_reducer, x, create_graph=True, vectorize=vectorize)
    assert res.grad_fn is not None
    expected = AF.jacobian(exp_reducer, x, create_graph=True)
    _assert_same(res, expected)
    # differentiable: the gradient of a function of it is torch's
    (g,) = torch.autograd.grad(res.sum(), x)
    (e,) = torch.autograd.grad(expected.sum(), x)
    torch.testing.assert_close(_unwrap(g), _unwrap(e))


@WRAPS
def test_vectorize_raises_no_warnings(wrap):
    x = wrap(_gen(3))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gradarg.jacobian(lambda a: (a**2).sum(), x, vectorize=True)
    assert not caught


def test_result_is_the_subclass_as_torchs():
    x = LoggingTensor(_gen(3))
    got = gradarg.jacobian(torch.sin, x, vectorize=True)
    expected = AF.jacobian(torch.sin, x, vectorize=True)
    assert type(got) is type(expected)
    torch.testing.assert_close(_unwrap(got), torch.diag(torch.cos(_gen(3))))


def test_vectorize_true_tries_is_grads_batched_before_giving_up(monkeypatch):
    """When torch.func.vmap cannot batch the backward pass, vectorize=True does what torch
    does (one is_grads_batched call) rather than raise."""
    from gradarg.core import reverse

    def refuse(*args, **kwargs):
        raise RuntimeError("vmap: no batching rule (simulated)")

    monkeypatch.setattr(reverse, "batched", refuse)
    x = _gen(5, dtype=torch.float64)
    got = gradarg.jacobian(torch.tanh, x, vectorize=True)  # tanh: not on the legacy list
    torch.testing.assert_close(got, AF.jacobian(torch.tanh, x), rtol=1e-12, atol=1e-14)
    # a graph whose batched backward torch gets wrong is still refused
    with pytest.raises(gradarg.VectorizationError, match="is_grads_batched"):
        gradarg.jacobian(
            lambda t: torch.cdist(t.view(-1, 1), t.view(-1, 1)), x, vectorize=True,
            method="reverse",
        )
