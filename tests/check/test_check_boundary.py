"""check_backward refuses, by name, what it cannot check: a meta-device or sparse input that
requires grad, and a call inside a torch.func transform (where torch's own error was raised);
backward_vjp under inference_mode says that inference_mode is why nothing requires grad."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from torch.func import grad, vmap

import gradarg

D = torch.float64


@given(n=st.integers(1, 5), layout=st.sampled_from(["meta", "coo", "csr"]))
def test_an_input_without_values_or_dense_layout_is_refused_by_name(n, layout):
    if layout == "meta":
        x = torch.empty(n, device="meta", dtype=D, requires_grad=True)
        kind, words = ValueError, "is on the meta device"
    else:
        dense = torch.rand(n, n, dtype=D)
        x = (dense.to_sparse() if layout == "coo" else dense.to_sparse_csr()).requires_grad_()
        kind, words = TypeError, "is a sparse tensor"
    with pytest.raises(kind, match=rf"^input 0 {words}"):
        gradarg.check_backward(torch.sin, x)


def test_a_sparse_constant_beside_the_checked_input_is_fine():
    a = torch.eye(3, dtype=D).to_sparse()  # does not require grad: a constant of fn
    x = torch.rand(3, dtype=D, requires_grad=True)
    assert bool(gradarg.check_backward(lambda m, t: torch.sparse.mm(m, t[:, None])[:, 0], a, x))


@pytest.mark.parametrize("transform", ["grad", "vmap"])
def test_inside_a_transform_the_refusal_names_it(transform):
    x = torch.rand(3, dtype=D)

    def verdict(t):
        return torch.as_tensor(float(bool(gradarg.check_backward(torch.sin, t)))) * t.sum()

    call = grad(verdict) if transform == "grad" else vmap(verdict)
    with pytest.raises(ValueError, match=rf"check_backward .* inside torch\.func\.{transform}"):
        call(x if transform == "grad" else x.repeat(2, 1))


def test_inference_mode_is_named_as_the_cause():
    x, v = torch.rand(3), torch.rand(3)
    with torch.inference_mode(), pytest.raises(ValueError, match="inference_mode"):
        gradarg.backward_vjp(torch.sin, x.clone(), v)
