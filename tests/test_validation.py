"""Bad input: a TypeError/ValueError that names the argument and what was expected."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

import gradarg

F64 = torch.float64
X = torch.tensor([0.5, -1.0, 2.0], dtype=F64)
V = torch.ones(3, dtype=F64)


def jac(x):
    return gradarg.jacobian(torch.sin, x)


def vjp(x):
    return gradarg.backward_vjp(torch.sin, x, V)


def cmp(x):
    return gradarg.compare_vjp(torch.sin, x, V)


ENTRY_POINTS = [pytest.param(f, id=f.__name__) for f in (jac, vjp, cmp)]


# --------------------------------------------------------------------------- x


@pytest.mark.parametrize("call", ENTRY_POINTS)
def test_numpy_x(call):
    with pytest.raises(TypeError, match=r"^x must be a torch\.Tensor, got ndarray"):
        call(np.ones(3))


@pytest.mark.parametrize("call", ENTRY_POINTS)
def test_float_x(call):
    with pytest.raises(TypeError, match=r"^x must be a torch\.Tensor, got float"):
        call(1.5)


def test_list_of_numbers_x():
    # a list is a sequence of inputs: its first element is what is wrong
    with pytest.raises(TypeError, match=r"^x\[0\] must be a torch\.Tensor, got float"):
        gradarg.jacobian(torch.sin, [1.0, 2.0])


def test_tuple_with_one_bad_input():
    with pytest.raises(TypeError, match=r"^x\[1\] must be a torch\.Tensor, got list"):
        gradarg.jacobian(torch.mul, (X, [1.0, 2.0, 3.0]))


def test_empty_tuple_x():
    with pytest.raises(ValueError, match="x is an empty sequence"):
        gradarg.jacobian(torch.sin, ())


@pytest.mark.parametrize("call", ENTRY_POINTS)
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.bool])
def test_integer_or_bool_x(call, dtype):
    x = torch.ones(3, dtype=dtype)
    pattern = rf"^x has dtype {re.escape(str(dtype))}, which autograd cannot differentiate.*float"
    with pytest.raises(TypeError, match=pattern):
        call(x)


def test_integer_input_in_tuple():
    with pytest.raises(TypeError, match=r"^x\[1\] has dtype torch\.int64"):
        gradarg.jacobian(torch.mul, (X, torch.arange(3)))


# --------------------------------------------------------------------------- v


@pytest.mark.parametrize(
    "v_shape",
    [(2,), (3, 1), (), (1, 3)],
)
def test_v_shape_differs_from_output(v_shape):
    v = torch.ones(v_shape, dtype=F64)
    message = rf"^v has shape {re.escape(str(v_shape))} but the output has shape \(3,\)"
    with pytest.raises(ValueError, match=message):
        gradarg.backward_vjp(torch.sin, X, v)
    with pytest.raises(ValueError, match=message):
        gradarg.compare_vjp(torch.sin, X, v)


def test_v_shape_for_matrix_output():
    x = torch.ones(2, 3, dtype=F64)
    with pytest.raises(ValueError, match=r"v has shape \(3, 2\) but the output has shape \(2, 3\)"):
        gradarg.backward_vjp(torch.sin, x, torch.ones(3, 2, dtype=F64))


def test_v_shape_in_output_tensor_form():
    x = X.clone().requires_grad_(True)
    with pytest.raises(ValueError, match=r"v has shape \(2,\) but the output has shape \(3,\)"):
        gradarg.compare_vjp(x.sin(), x, torch.ones(2, dtype=F64), reference=np.eye(3))
    assert x.grad is None


@pytest.mark.parametrize("bad", [[1.0, 1.0, 1.0], np.ones(3)])
def test_v_not_a_tensor(bad):
    with pytest.raises(TypeError, match=r"^v must be a torch\.Tensor"):
        gradarg.backward_vjp(torch.sin, X, bad)


def test_integer_v():
    with pytest.raises(TypeError, match=r"^v has dtype torch\.int64"):
        gradarg.backward_vjp(torch.sin, X, torch.ones(3, dtype=torch.int64))


# --------------------------------------------------------------------------- what fn returns


def returns_float(t):
    return 1.5


def returns_numpy(t):
    return t.detach().numpy()


@pytest.mark.parametrize("fn", [returns_float, returns_numpy])
@pytest.mark.parametrize("method", gradarg.METHODS)
@pytest.mark.filterwarnings("ignore::gradarg.core.cuts.GraphCutWarning")  # .numpy()
def test_jacobian_of_non_tensor_output(fn, method):
    kind = "float" if fn is returns_float else "ndarray"
    message = rf"the value returned by {fn.__name__} is a {kind}, expected a torch\.Tensor"
    with pytest.raises(TypeError, match=message):
        gradarg.jacobian(fn, X, method=method)


@pytest.mark.parametrize("fn", [returns_float, returns_numpy])
@pytest.mark.filterwarnings("ignore::gradarg.core.cuts.GraphCutWarning")  # .numpy()
def test_vjp_of_non_tensor_output(fn):
    with pytest.raises(TypeError, match=rf"returned by {fn.__name__} is a \w+, expected a torch"):
        gradarg.backward_vjp(fn, X, V)
    with pytest.raises(TypeError, match=rf"returned by {fn.__name__} is a \w+, expected a torch"):
        gradarg.compare_vjp(fn, X, V)


def test_non_tensor_in_output_tuple():
    with pytest.raises(TypeError, match=r"element 1 of the tuple returned by <lambda> is a float"):
        gradarg.jacobian(lambda t: (t, 2.0), X)


def test_empty_output_tuple():
    with pytest.raises(TypeError, match="returned an empty tuple"):
        gradarg.jacobian(lambda t: (), X)


def two_outputs(t):
    return t.sin(), t.cos()


def test_tuple_output_to_backward_vjp():
    with pytest.raises(TypeError, match=r"two_outputs returned a tuple of 2 values; a VJP needs one"):
        gradarg.backward_vjp(two_outputs, X, V)


def test_tuple_output_to_compare_vjp():
    with pytest.raises(TypeError, match=r"two_outputs returned a tuple of 2 values; a VJP needs one"):
        gradarg.compare_vjp(two_outputs, X, V)


@pytest.mark.parametrize("method", gradarg.METHODS)
@pytest.mark.parametrize("vectorize", [None, False, True])
def test_integer_output_to_jacobian(method, vectorize):
    def argmax(t):
        return t.argmax()

    message = r"the output of argmax has dtype torch\.int64, which is not differentiable"
    with pytest.raises(TypeError, match=message):
        gradarg.jacobian(argmax, X, method=method, vectorize=vectorize)


def test_bool_output_in_tuple_to_jacobian():
    with pytest.raises(TypeError, match=r"output 1 of <lambda> has dtype torch\.bool"):
        gradarg.jacobian(lambda t: (t, t > 0), X)


def test_output_without_grad_to_backward_vjp():
    with pytest.raises(ValueError, match="the output of fn does not require grad"):
        gradarg.backward_vjp(lambda t: torch.ones(2), X, torch.ones(2))


def test_output_without_grad_to_compare_vjp():
    with pytest.raises(ValueError, match="the output of fn does not require grad"):
        gradarg.compare_vjp(lambda t: t.detach() * 2, X, V)


def test_output_depending_only_on_captured_parameters():
    w = torch.ones(3, dtype=F64, requires_grad=True)
    with pytest.raises(ValueError, match="the output of fn does not depend on x"):
        gradarg.backward_vjp(lambda t: w * 2, X, V)
    assert w.grad is None


def test_output_tensor_without_grad():
    with pytest.raises(ValueError, match=r"^y does not require grad"):
        gradarg.compare_vjp(X.sin(), X, V, reference=np.eye(3))


def test_output_tensor_x_without_grad():
    x = X.clone().requires_grad_(True)
    y = x.sin()
    with pytest.raises(ValueError, match=r"^x does not require grad"):
        gradarg.compare_vjp(y, X, V, reference=np.eye(3))


def test_output_tensor_x_not_in_graph():
    x = X.clone().requires_grad_(True)
    other = X.clone().requires_grad_(True)
    with pytest.raises(ValueError, match="x is not part of y's graph"):
        gradarg.compare_vjp(x.sin(), other, V, reference=np.eye(3))
    assert other.grad is None


def test_fn_neither_callable_nor_tensor():
    with pytest.raises(TypeError, match="fn must be a callable or an output tensor, got int"):
        gradarg.compare_vjp(3, X, V)


# --------------------------------------------------------------------------- NaN and Inf


NAN_INF = [
    pytest.param(torch.tensor([float("nan"), 1.0], dtype=F64), id="nan"),
    pytest.param(torch.tensor([1.0, float("inf")], dtype=F64), id="inf"),
    pytest.param(torch.tensor([-float("inf"), 0.0], dtype=F64), id="-inf"),
]


@pytest.mark.parametrize("x", NAN_INF)
@pytest.mark.parametrize("method", gradarg.METHODS)
def test_jacobian_warns_on_nan_inf(x, method):
    with pytest.warns(RuntimeWarning, match="x contains NaN or Inf"):
        gradarg.jacobian(torch.sin, x, method=method)


@pytest.mark.parametrize("x", NAN_INF)
def test_backward_vjp_warns_on_nan_inf(x):
    with pytest.warns(RuntimeWarning, match="x contains NaN or Inf"):
        gradarg.backward_vjp(torch.sin, x, torch.ones(2, dtype=F64))


@pytest.mark.parametrize("x", NAN_INF)
def test_compare_vjp_warns_on_nan_inf(x):
    with pytest.warns(RuntimeWarning, match="x contains NaN or Inf"):
        r = gradarg.compare_vjp(torch.sin, x, torch.ones(2, dtype=F64))
    assert not r.agree  # NaN never agrees


def test_warning_names_the_tuple_element():
    bad = torch.tensor([float("nan")], dtype=F64)
    with pytest.warns(RuntimeWarning, match=r"x\[1\] contains NaN or Inf"):
        gradarg.jacobian(torch.mul, (torch.ones(1, dtype=F64), bad))


def test_finite_input_does_not_warn():
    # filterwarnings = error in pyproject: any warning here would fail the test
    gradarg.jacobian(torch.sin, X)
    gradarg.compare_vjp(torch.sin, X, V)


# --------------------------------------------------------------------------- method and reference


@pytest.mark.parametrize("method", ["central", "Reverse", "", "fd"])
def test_unknown_method(method):
    with pytest.raises(ValueError, match=rf"method must be one of .*got {re.escape(repr(method))}"):
        gradarg.jacobian(torch.sin, X, method=method)


def test_forward_with_complex_input():
    z = X.to(torch.complex128)
    with pytest.raises(ValueError, match="method='forward' does not support complex inputs"):
        gradarg.jacobian(torch.sin, z, method="forward")


@pytest.mark.parametrize("reference", ["exact", "backward", "fd"])
def test_unknown_string_reference(reference):
    with pytest.raises(ValueError, match=rf"reference must be .*got {re.escape(repr(reference))}"):
        gradarg.compare_vjp(torch.sin, X, V, reference=reference)


@pytest.mark.parametrize("reference", [3, 2.5, None, [[1.0]]])
def test_reference_of_unknown_kind(reference):
    with pytest.raises(TypeError, match=rf"reference must be .*got {type(reference).__name__}"):
        gradarg.compare_vjp(torch.sin, X, V, reference=reference)


def test_reference_jacobian_of_wrong_shape():
    with pytest.raises(ValueError, match=r"has shape \(3,\), expected y\.shape \+ x\.shape = \(3, 3\)"):
        gradarg.compare_vjp(torch.sin, X, V, reference=np.ones(3))


def test_reference_vjp_of_wrong_shape():
    with pytest.raises(ValueError, match=r"returned shape \(2,\), expected x\.shape = \(3,\)"):
        gradarg.compare_vjp(torch.sin, X, V, reference=lambda v: v[:2])


# --------------------------------------------------------------------------- contract


def test_contract_shape_mismatch():
    with pytest.raises(ValueError, match=r"jac has shape \(3, 3\), which does not start with v's"
                                         r" shape \(2,\)"):
        gradarg.contract(torch.ones(2), torch.ones(3, 3))


def test_contract_non_tensor():
    with pytest.raises(TypeError, match=r"^v must be a torch\.Tensor, got list"):
        gradarg.contract([1.0], torch.ones(1, 3))
    with pytest.raises(TypeError, match=r"^jac must be a torch\.Tensor, got list"):
        gradarg.contract(torch.ones(1), [[1.0, 2.0]])


def test_contract_by_hand():
    J = torch.tensor([[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]])  # y (2,), x (2, 2)
    v = torch.tensor([1.0, -1.0])
    torch.testing.assert_close(gradarg.contract(v, J), torch.tensor([[-4.0, -4.0], [-4.0, -4.0]]))
    got = gradarg.contract(np.array([2.0, 0.0]), J.numpy())
    torch.testing.assert_close(got, torch.tensor([[2.0, 4.0], [6.0, 8.0]], dtype=F64))


def test_compare_vjp_warns_once_about_nan():
    x = torch.tensor([1.0, float("nan")], dtype=torch.float64)
    with pytest.warns(RuntimeWarning, match="NaN or Inf") as record:
        gradarg.compare_vjp(torch.sin, x, torch.ones(2, dtype=torch.float64), reference="forward")
    assert len([w for w in record if "NaN or Inf" in str(w.message)]) == 1
