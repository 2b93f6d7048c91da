"""Class: a vector–Jacobian product of a softmax output with a vector constant along the
softmax's dimension (``grad_outputs=torch.ones_like(probs)``, or ``probs.backward(ones)``) is
zero by construction and is named.  Look-alikes are not: a random vector (Hutchinson's
estimator), ones on a ``log_softmax`` or a sigmoid, ones on a softmax over a dimension of size
1 is not generated (nothing to sum), a vector constant along another dimension than the
softmax's.

The truth comes from torch alone: the product itself, computed by ``torch.autograd.grad`` and
compared with zero (exactly zero in exact arithmetic: at most rounding here) against its size
with a random vector.  Generated: the batch, the classes, the softmax's dim, the constant.
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg

SAID = "so this vector-Jacobian product vᵀJ is exactly zero"
FORMS = ["ones", "constant", "backward ones", "random", "log_softmax", "sigmoid", "other dim"]


@pytest.mark.parametrize("form", FORMS)
@settings(max_examples=6, deadline=None)
@given(batch=st.integers(2, 10), classes=st.integers(2, 7), dim=st.sampled_from([1, -1]),
       c=st.floats(0.1, 5.0), seed=st.integers(0, 2**16))
def test_a_constant_vector_on_a_softmax_is_named(form, batch, classes, dim, c, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, classes))
    x = torch.randn(batch, 4, requires_grad=True)
    with gradarg.watch(model) as w:
        z = model(x)
        act = {"log_softmax": lambda t: torch.log_softmax(t, dim),
               "sigmoid": torch.sigmoid}.get(form, lambda t: torch.softmax(t, dim))
        out = act(z)
        v = {"ones": torch.ones_like(out), "constant": torch.full_like(out, c),
             "backward ones": torch.ones_like(out), "random": torch.randn_like(out),
             "other dim": torch.randn(1, classes).expand(batch, classes).clone()}.get(
            form, torch.ones_like(out))
        if form == "backward ones":
            out.backward(v)
            vjp = x.grad
        else:
            (vjp,) = torch.autograd.grad(out, x, grad_outputs=v, create_graph=True)
            (vjp.pow(2).sum() + out.sum()).backward()
    # the truth, from torch: the product is zero (rounding) exactly for the constant vectors
    (rand,) = torch.autograd.grad(act(model(x)), x, torch.randn(batch, classes))
    zero = bool(vjp.abs().max() <= 1e-6 * max(float(rand.abs().max()), 1e-12) + 1e-7)
    named = form in ("ones", "constant", "backward ones")
    assert zero == named, (form, float(vjp.abs().max()))
    text = w.summary(checks=False)
    assert (SAID in text) == named, (form, text)
