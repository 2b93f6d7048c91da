"""No side effects on the caller: x, its .grad, its version counter, the RNG, and no graph left alive."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import gradarg

F64 = torch.float64
V = torch.tensor([1.0, -2.0, 0.5], dtype=F64)


class Tracked:
    """fn(t) = sin(2 t) that keeps weak references to the tensors it creates."""

    def __init__(self):
        self.refs: list[weakref.ref] = []

    def __call__(self, t):
        h = 2 * t
        self.refs.append(weakref.ref(h))
        y = torch.sin(h)
        self.refs.append(weakref.ref(y))
        return y

    def alive(self) -> int:
        if any(r() is not None for r in self.refs):
            gc.collect()  # only reference cycles are left: collect them (slow, so only here)
        return sum(r() is not None for r in self.refs)


def jacobian_call(method, vectorize=None):
    def call(fn, x):
        return gradarg.jacobian(fn, x, method=method, vectorize=vectorize)

    return call


CALLS = [
    *(
        pytest.param(jacobian_call(m, vec), id=f"jacobian-{m}-{vec}")
        for m in gradarg.METHODS
        for vec in (None, False)
    ),
    pytest.param(lambda fn, x: gradarg.backward_vjp(fn, x, V), id="backward_vjp"),
    *(
        pytest.param(lambda fn, x, ref=ref: gradarg.compare_vjp(fn, x, V, reference=ref),
                     id=f"compare_vjp-{ref}")
        for ref in ("finite-difference", "forward", "reverse")
    ),
    pytest.param(lambda fn, x: gradarg.compare_vjp(fn, x, V, reference=np.eye(3)),
                 id="compare_vjp-jacobian"),
]


def caller_x(kind: str) -> torch.Tensor:
    x = torch.tensor([0.5, -1.0, 2.0], dtype=F64)
    if kind == "plain":
        return x
    x.requires_grad_(True)
    if kind == "with grad":
        x.grad = torch.tensor([7.0, 8.0, 9.0], dtype=F64)
    return x


@pytest.mark.parametrize("kind", ["plain", "requires grad", "with grad"])
@pytest.mark.parametrize("call", CALLS)
def test_caller_x_untouched(call, kind):
    x = caller_x(kind)
    values = x.detach().clone()
    grad = x.grad
    grad_values = None if grad is None else grad.clone()
    version = x._version
    requires_grad = x.requires_grad
    call(torch.sin, x)
    assert torch.equal(x.detach(), values)
    assert x._version == version
    assert x.requires_grad == requires_grad
    assert x.grad is grad
    if grad is not None:
        assert torch.equal(x.grad, grad_values)
        assert grad._version == 0


@pytest.mark.parametrize("call", CALLS)
def test_no_graph_kept_alive(call):
    fn = Tracked()
    x = caller_x("requires grad")
    result = call(fn, x)
    assert fn.refs, "fn was not called"
    assert fn.alive() == 0
    tensors = [result] if isinstance(result, torch.Tensor) else [result.backward, result.reference]
    for t in tensors:
        assert not t.requires_grad and t.grad_fn is None


@pytest.mark.parametrize("call", CALLS)
def test_fn_that_mutates_its_input_cannot_reach_the_callers_x(call):
    def sneaky(t):
        with torch.no_grad():
            t.mul_(1.0)  # bumps the version counter of whatever tensor fn receives
        return torch.sin(t)

    x = caller_x("plain")
    call(sneaky, x)
    assert x._version == 0


@pytest.mark.parametrize("method", gradarg.METHODS)
@pytest.mark.parametrize("vectorize", [None, False])
def test_jacobian_keeps_the_global_rng_state(method, vectorize):
    x = torch.linspace(0.5, 2.0, 6, dtype=F64)
    state = torch.get_rng_state()
    gradarg.jacobian(lambda t: F.dropout(t, 0.5) + torch.randn_like(t), x, method=method,
                     vectorize=vectorize)
    assert torch.equal(torch.get_rng_state(), state)
    # also for a function that draws nothing
    gradarg.jacobian(torch.sin, x, method=method, vectorize=vectorize)
    assert torch.equal(torch.get_rng_state(), state)


@pytest.mark.parametrize("reference", ["finite-difference", "forward", "reverse"])
def test_compare_vjp_keeps_the_global_rng_state(reference):
    x = torch.linspace(0.5, 2.0, 3, dtype=F64)
    state = torch.get_rng_state()
    gradarg.compare_vjp(lambda t: F.dropout(t, 0.5) * t, x, V, reference=reference)
    assert torch.equal(torch.get_rng_state(), state)


# --------------------------------------------------------------------------- output-tensor form


def test_output_tensor_form_leaves_x_as_it_was():
    x = caller_x("with grad")
    grad, values = x.grad, x.detach().clone()
    y = torch.sin(2 * x)
    version = x._version
    r = gradarg.compare_vjp(y, x, V, reference=lambda v: 2 * torch.cos(2 * values) * v)
    assert r.agree
    assert x.grad is grad and torch.equal(grad, torch.tensor([7.0, 8.0, 9.0], dtype=F64))
    assert torch.equal(x.detach(), values) and x._version == version and x.requires_grad


def test_output_tensor_form_keeps_no_reference_to_the_graph():
    x = caller_x("requires grad")
    y = torch.sin(2 * x)
    ref = weakref.ref(y)
    r = gradarg.compare_vjp(y, x, V, reference=lambda v: 2 * torch.cos(2 * x.detach()) * v)
    del y
    gc.collect()
    assert ref() is None
    assert not r.backward.requires_grad and r.backward.grad_fn is None
    assert x.grad is None


def test_output_tensor_form_does_not_touch_other_leaves():
    x = caller_x("requires grad")
    w = torch.tensor([1.0, 2.0, 3.0], dtype=F64, requires_grad=True)
    y = w * x
    gradarg.compare_vjp(y, x, V, reference=torch.diag(w.detach()))
    assert w.grad is None and x.grad is None


@pytest.mark.parametrize("call", CALLS)
def test_captured_parameters_get_no_grad(call):
    lin = torch.nn.Linear(3, 3).double()
    call(lin, caller_x("plain"))
    assert lin.weight.grad is None and lin.bias.grad is None
