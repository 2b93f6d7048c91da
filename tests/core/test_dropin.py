"""gradarg.jacobian as a drop-in for torch.autograd.functional.jacobian: the same arguments (in
the same order), the same results, the same strict-mode errors, and a differentiable Jacobian
with create_graph=True.  Every expected value comes from torch.autograd.functional."""

from __future__ import annotations

import pytest
import torch
from torch.autograd import functional as AF

import gradarg

F64 = torch.float64
G = torch.Generator().manual_seed(7)
W = torch.randn(4, 3, dtype=F64, generator=G)
A = torch.randn(3, dtype=F64, generator=G)
B = torch.randn(2, 2, dtype=F64, generator=G)
Z = torch.tensor([1.0 + 2.0j, -0.5 + 0.25j], dtype=torch.complex128)


def mlp(t):
    return torch.tanh(W @ t)


def pair(a, b):
    return (a.sin() * b.sum(), (a**2).sum() * b)


def cast_up(t):
    return t.double().exp()


def tall(t):
    return torch.cat([t.sin(), t.cos(), t * t])


def unused_second(a, b):
    return a.exp()


FUNCTIONS = {
    "mlp": (mlp, A),
    "pair": (pair, (A, B)),
    "0-d": (lambda t: (t**3).sum(), A),
    "tall": (tall, A),
    "float32->float64": (cast_up, A.float()),
    "unused input": (unused_second, (A, B)),
    "complex": (lambda t: t * t.conj() + t**2, Z),
}

# the argument combinations torch.autograd.functional.jacobian accepts
TORCH_CALLS = {
    "defaults": {},
    "vectorize": {"vectorize": True},
    "create_graph": {"create_graph": True},
    "create_graph vectorize": {"create_graph": True, "vectorize": True},
    "forward-mode": {"strategy": "forward-mode", "vectorize": True},
    "reverse-mode": {"strategy": "reverse-mode"},
    "strict loop": {"strict": True},
}


def assert_same(got, expected):
    if isinstance(expected, (tuple, list)):  # torch's forward mode nests lists, gradarg tuples
        assert isinstance(got, tuple) and len(got) == len(expected)
        for g, e in zip(got, expected, strict=True):
            assert_same(g, e)
        return
    assert isinstance(got, torch.Tensor)
    assert got.shape == expected.shape
    assert got.dtype == expected.dtype
    assert got.requires_grad == expected.requires_grad
    torch.testing.assert_close(got, expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("call", TORCH_CALLS)
@pytest.mark.parametrize("name", FUNCTIONS)
def test_same_result_as_torch(name, call):
    fn, x = FUNCTIONS[name]
    kwargs = TORCH_CALLS[call]
    if name == "complex" and kwargs.get("strategy") == "forward-mode":
        pytest.skip("gradarg refuses forward mode on complex inputs (conjugate convention)")
    if name == "complex" and not kwargs.get("vectorize"):
        pytest.skip("torch's loop refuses complex outputs (one backward per scalar output)")
    try:
        expected = AF.jacobian(fn, x, **kwargs)
    except RuntimeError as err:
        message = str(err)
    else:
        assert_same(gradarg.jacobian(fn, x, **kwargs), expected)
        return
    assert kwargs.get("strict")  # strict mode: the same error, word for word
    with pytest.raises(RuntimeError) as info:
        gradarg.jacobian(fn, x, **kwargs)
    assert str(info.value) == message


def test_positional_arguments_in_torchs_order():
    # jacobian(func, inputs, create_graph, strict, vectorize, strategy)
    for args in [(False, False, True, "forward-mode"), (True, False, False), (False, True)]:
        assert_same(gradarg.jacobian(mlp, A, *args), AF.jacobian(mlp, A, *args))


# --------------------------------------------------------------------------- create_graph


@pytest.mark.parametrize("method", ["auto", "reverse", "forward"])
@pytest.mark.parametrize("vectorize", [None, False])
def test_jacobian_of_gradient_is_torchs_hessian(method, vectorize):
    def f(t):
        return (torch.tanh(W @ t) ** 2).sum() + t.prod()

    def grad_f(t):
        return gradarg.jacobian(f, t, create_graph=True, method=method, vectorize=vectorize)

    expected = AF.hessian(f, A)
    # forward over reverse too; forward over forward needs nested forward-mode levels
    for outer in ("reverse", "forward") if method != "forward" else ("reverse",):
        got = gradarg.jacobian(grad_f, A, method=outer)
        torch.testing.assert_close(got, expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("method", ["reverse", "forward"])
@pytest.mark.parametrize("vectorize", [None, False])
def test_create_graph_reaches_the_callers_tensor(method, vectorize):
    x = A.clone().requires_grad_(True)
    J = gradarg.jacobian(mlp, x, create_graph=True, method=method, vectorize=vectorize)
    assert J.requires_grad
    (got,) = torch.autograd.grad((J**2).sum(), x)
    x2 = A.clone().requires_grad_(True)
    (expected,) = torch.autograd.grad((AF.jacobian(mlp, x2, create_graph=True) ** 2).sum(), x2)
    torch.testing.assert_close(got, expected, rtol=1e-10, atol=1e-12)
    assert x.grad is None


@pytest.mark.parametrize("method", ["reverse", "forward"])
def test_create_graph_reaches_module_parameters(method):
    lin = torch.nn.Linear(3, 2).double()
    fn = lambda t: torch.tanh(lin(t))
    J = gradarg.jacobian(fn, A, create_graph=True, method=method)
    (got,) = torch.autograd.grad(J.sum(), lin.weight)
    (expected,) = torch.autograd.grad(AF.jacobian(fn, A, create_graph=True).sum(), lin.weight)
    torch.testing.assert_close(got, expected, rtol=1e-10, atol=1e-12)


def test_without_create_graph_the_result_is_detached():
    x = A.clone().requires_grad_(True)
    for method in ("reverse", "forward"):
        J = gradarg.jacobian(mlp, x, method=method)
        assert not J.requires_grad and J.grad_fn is None


def test_create_graph_under_no_grad_is_still_differentiable():
    x = A.clone().requires_grad_(True)
    with torch.no_grad():
        J = gradarg.jacobian(mlp, x, create_graph=True)
    expected = AF.jacobian(mlp, x, create_graph=True)
    assert J.requires_grad == expected.requires_grad
    torch.testing.assert_close(J, expected)


# --------------------------------------------------------------------------- strict


def _torch_message(fn, x, **kwargs):
    with pytest.raises(RuntimeError) as info:
        AF.jacobian(fn, x, strict=True, **kwargs)
    return str(info.value)


STRICT_CASES = {
    "constant output": (lambda t: torch.ones(2, dtype=F64), A, {}),
    "unused input": (unused_second, (A, B), {}),
    "second output constant": (lambda a, b: (a * b.sum(), torch.zeros(2, dtype=F64)), (A, B), {}),
    "linear with create_graph": (lambda t: 2 * t, A, {"create_graph": True}),
}


@pytest.mark.parametrize("case", STRICT_CASES)
@pytest.mark.parametrize("method", ["auto", "reverse", "forward"])
@pytest.mark.parametrize("vectorize", [None, True, False])
def test_strict_raises_torchs_error(case, method, vectorize):
    fn, x, kwargs = STRICT_CASES[case]
    if method == "forward" and kwargs.get("create_graph"):
        pytest.skip("strict with create_graph needs reverse mode (tested below)")
    message = _torch_message(fn, x, **kwargs)
    with pytest.raises(RuntimeError) as info:
        gradarg.jacobian(fn, x, strict=True, method=method, vectorize=vectorize, **kwargs)
    assert str(info.value) == message


@pytest.mark.parametrize("method", ["auto", "reverse", "forward"])
def test_strict_passes_when_everything_depends(method):
    got = gradarg.jacobian(pair, (A, B), strict=True, method=method)
    assert_same(got, AF.jacobian(pair, (A, B)))


@pytest.mark.parametrize("method", ["auto", "reverse", "forward"])
def test_strict_input_reached_only_through_a_captured_tensor_is_independent(method):
    # as torch: the output requires grad (through a captured tensor), not through fn's argument
    captured = A.clone().requires_grad_(True)
    fn = lambda t: captured.sin() * t.detach()
    message = _torch_message(fn, A)
    assert "independent of input 0" in message
    with pytest.raises(RuntimeError) as info:
        gradarg.jacobian(fn, A, strict=True, method=method)
    assert str(info.value) == message


def test_strict_with_create_graph_refuses_forward_mode():
    with pytest.raises(ValueError, match="needs reverse mode"):
        gradarg.jacobian(mlp, A, strict=True, create_graph=True, method="forward")


# --------------------------------------------------------------------------- strategy


def test_strategy_maps_to_method():
    fwd = gradarg.jacobian(tall, A, strategy="forward-mode")
    torch.testing.assert_close(fwd, gradarg.jacobian(tall, A, method="forward"), rtol=0, atol=0)
    rev = gradarg.jacobian(tall, A, strategy="reverse-mode")
    torch.testing.assert_close(rev, gradarg.jacobian(tall, A, method="reverse"), rtol=0, atol=0)
    same = gradarg.jacobian(tall, A, strategy="reverse-mode", method="reverse")
    torch.testing.assert_close(same, rev, rtol=0, atol=0)


def test_unknown_strategy_and_contradictions_raise():
    with pytest.raises(ValueError, match="strategy must be"):
        gradarg.jacobian(mlp, A, strategy="forward")
    with pytest.raises(ValueError, match="means method='forward'"):
        gradarg.jacobian(mlp, A, strategy="forward-mode", method="reverse")
    for flag in ("create_graph", "strict"):
        with pytest.raises(ValueError, match=f"{flag}=True needs autodiff"):
            gradarg.jacobian(mlp, A, method="finite-difference", **{flag: True})
