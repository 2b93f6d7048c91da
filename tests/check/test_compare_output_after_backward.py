"""compare_vjp given an output tensor, after the caller's own backward().

A user computes ``y``, calls ``y.sum().backward()`` (or ``loss.backward()``) and then asks
``compare_vjp(y, x, v, reference=J)``: the graph's saved tensors are gone.  The refusal says
so and what to pass instead (not torch's bare "backward through the graph a second time"),
and a string reference, which needs a function, is refused before any backward pass runs (so
a live graph is left as it was).  After ``backward(retain_graph=True)`` the comparison runs and
agrees with the Jacobian torch computes.  ``x.grad`` is the caller's in every case.
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from gradarg import compare_vjp

D = torch.float64
FUNCTIONS = {
    "sin-times-x": lambda t: torch.sin(t) * t,
    "softmax": lambda t: torch.softmax(t, 0),
    "cumprod": lambda t: torch.cumprod(t, 0),
    "square-sum-sqrt": lambda t: (t ** 2).sum().sqrt() * t,
}


@given(name=st.sampled_from(sorted(FUNCTIONS)), n=st.integers(1, 6), seed=st.integers(0, 999),
       reference=st.sampled_from(["jacobian", "vjp-function", "finite-difference", "forward"]))
def test_after_the_callers_backward(name, n, seed, reference):
    torch.manual_seed(seed)
    f = FUNCTIONS[name]
    x = torch.randn(n, dtype=D, requires_grad=True)
    y = f(x)
    v = torch.randn(y.shape, dtype=D)
    J = torch.autograd.functional.jacobian(f, x.detach())
    ref = {"jacobian": J, "vjp-function": lambda u: u @ J.reshape(y.numel(), n),
           "finite-difference": "finite-difference", "forward": "forward"}[reference]
    if isinstance(ref, str):  # refused first: the live graph is left to the caller
        with pytest.raises(ValueError, match="needs a function to differentiate"):
            compare_vjp(y, x, v, reference=ref)
        assert x.grad is None
        y.backward(v)  # the caller's own backward still runs on the intact graph
        torch.testing.assert_close(x.grad, v @ J)
        return
    y.sum().backward()  # the caller's own backward frees the saved tensors
    mine = x.grad.clone()
    with pytest.raises(RuntimeError, match="freed by an earlier backward pass"):
        compare_vjp(y, x, v, reference=ref)
    assert torch.equal(x.grad, mine)


@given(name=st.sampled_from(sorted(FUNCTIONS)), n=st.integers(1, 6), seed=st.integers(0, 999))
def test_after_a_backward_that_retained_the_graph(name, n, seed):
    torch.manual_seed(seed)
    f = FUNCTIONS[name]
    x = torch.randn(n, dtype=D, requires_grad=True)
    y = f(x)
    y.sum().backward(retain_graph=True)
    mine = x.grad.clone()
    v = torch.randn(y.shape, dtype=D)
    J = torch.autograd.functional.jacobian(f, x.detach())
    r = compare_vjp(y, x, v, reference=J)
    assert r.agree
    torch.testing.assert_close(r.backward, v @ J)
    assert torch.equal(x.grad, mine)
