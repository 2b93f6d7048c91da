"""gradarg.jacobian under torch.no_grad() and torch.inference_mode(): the right Jacobian, never
zeros.  Expected values come from torch.func.jacrev computed outside those modes."""

from __future__ import annotations

import contextlib

import pytest
import torch

import gradarg

F64 = torch.float64
W = torch.randn(4, 3, dtype=F64, generator=torch.Generator().manual_seed(0))
X = torch.tensor([0.5, -1.0, 2.0], dtype=F64)


def net(t):
    return torch.tanh(W @ t) * t.sum()


def two_in_two_out(a, b):
    return (torch.sin(a) * b.sum(), (a**2).sum() * b)


MODES = {
    "no_grad": torch.no_grad,
    "inference_mode": torch.inference_mode,
    "no_grad+inference_mode": lambda: _both(),
}


@contextlib.contextmanager
def _both():
    with torch.no_grad(), torch.inference_mode():
        yield


# every route, batched and looped (finite differences batch through the same helper)
ROUTES = [
    ("auto", None),
    ("auto", False),
    ("reverse", True),
    ("reverse", False),
    ("forward", True),
    ("forward", False),
    ("finite-difference", None),
]


def _tol(method):
    t = gradarg.fd_tolerance(F64) if method == "finite-difference" else 1e-12
    return {"rtol": t, "atol": t}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("method", "vectorize"), ROUTES)
@pytest.mark.parametrize("made_inside", [False, True], ids=["x outside", "x made inside"])
def test_tensor_function_under_mode(mode, method, vectorize, made_inside):
    expected = torch.func.jacrev(net)(X)
    assert expected.abs().sum() > 0
    with MODES[mode]():
        x = X.clone() if made_inside else X  # an inference tensor under inference_mode
        got = gradarg.jacobian(net, x, method=method, vectorize=vectorize)
    torch.testing.assert_close(got, expected, **_tol(method))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("method", "vectorize"), ROUTES)
def test_tuple_function_under_mode(mode, method, vectorize):
    a, b = X, torch.tensor([1.5, -0.5], dtype=F64)
    expected = torch.func.jacrev(two_in_two_out, argnums=(0, 1))(a, b)
    with MODES[mode]():
        got = gradarg.jacobian(
            two_in_two_out, (a.clone(), b.clone()), method=method, vectorize=vectorize
        )
    for row_got, row_exp in zip(got, expected, strict=True):
        for g, e in zip(row_got, row_exp, strict=True):
            torch.testing.assert_close(g, e, **_tol(method))


@pytest.mark.parametrize("mode", MODES)
def test_module_parameters_under_mode_stay_untouched(mode):
    lin = torch.nn.Linear(3, 2).double()
    with MODES[mode]():
        got = gradarg.jacobian(lin, X)
    torch.testing.assert_close(got, lin.weight.detach(), rtol=0, atol=0)
    assert lin.weight.grad is None


def test_modes_are_restored_after_the_call():
    with torch.inference_mode():
        gradarg.jacobian(net, X)
        assert torch.is_inference_mode_enabled()
        assert not torch.is_grad_enabled()
    with torch.no_grad():
        gradarg.jacobian(net, X, create_graph=True)
        assert not torch.is_grad_enabled()


def test_captured_inference_tensor_raises_instead_of_zeros():
    # a weight created in inference mode cannot be saved for a backward pass: torch says so
    with torch.inference_mode():
        w = W.clone()
        with pytest.raises(RuntimeError, match=r"[Ii]nference tensor"):
            gradarg.jacobian(lambda t: torch.tanh(w @ t), X, method="reverse")
