"""check_backward and compare_vjp at their edges: empty inputs, a function that is not one."""

from __future__ import annotations

import pytest
import torch

import gradarg

F64 = torch.float64


@pytest.mark.parametrize("shape", [(0,), (0, 3), (4, 0)])
def test_check_backward_refuses_an_empty_input_and_names_it(shape):
    w = torch.randn(3, dtype=F64, requires_grad=True)
    empty = torch.zeros(shape, dtype=F64, requires_grad=True)
    with pytest.raises(ValueError, match=r"\bbias is empty \(shape \(" + str(shape[0])):
        gradarg.check_backward(lambda w, bias: (w.sum() + bias.sum()) * w, w, empty)


def test_check_backward_names_the_empty_one_among_several_inputs():
    def fn(a, b):
        return a * 2 + b.sum()

    a = torch.zeros(0, dtype=F64, requires_grad=True)
    b = torch.ones(2, dtype=F64, requires_grad=True)
    with pytest.raises(ValueError, match=r"^a is empty"):
        gradarg.check_backward(fn, a, b)


def test_an_empty_input_without_grad_is_passed_through_not_refused():
    x = torch.randn(3, dtype=F64, requires_grad=True)
    unused = torch.zeros(0, dtype=F64)
    r = gradarg.check_backward(lambda x, u: x * 2 + u.sum(), x, unused)
    assert r.status == "agree"


@pytest.mark.parametrize("reference", ["finite-difference", "forward"])
def test_compare_vjp_refuses_an_empty_input(reference):
    with pytest.raises(ValueError, match=r"^x is empty \(shape \(0,\)\)"):
        gradarg.compare_vjp(torch.sin, torch.zeros(0, dtype=F64), torch.zeros(0, dtype=F64),
                            reference=reference)


@pytest.mark.parametrize("fn", [3, "sin", None])
def test_compare_vjp_names_fn_when_it_is_not_a_function(fn):
    with pytest.raises(TypeError, match=r"^fn must be a callable or an output tensor"):
        gradarg.compare_vjp(fn, torch.ones(2, dtype=F64), torch.ones(2, dtype=F64))


@pytest.mark.parametrize("fn", [3, None, [torch.sin]])
def test_check_backward_names_fn_when_it_is_not_a_function(fn):
    with pytest.raises(TypeError, match=r"^fn must be a function"):
        gradarg.check_backward(fn, torch.ones(2, dtype=F64, requires_grad=True))
