"""compare_vjp: references, contraction over output dims, the report, and catching a wrong backward."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from backward_corpus import SquareMissingFactor  # old style, no jvp: backward forgets the 2

import gradarg

F64 = torch.float64
STRING_REFERENCES = ("finite-difference", "forward", "reverse")

X = torch.tensor([0.5, -1.0, 2.0], dtype=F64)
V = torch.tensor([1.0, 10.0, -3.0], dtype=F64)


def square(t):
    return t**2


# --------------------------------------------------------------------------- references


@pytest.mark.parametrize("reference", STRING_REFERENCES)
def test_string_references_agree_on_square(reference):
    r = gradarg.compare_vjp(square, X, V, reference=reference)
    assert r.agree and bool(r)
    # backward(v) of x^2 is v * 2x
    torch.testing.assert_close(r.backward, V * 2 * X, rtol=0, atol=0)
    torch.testing.assert_close(r.reference, V * 2 * X, rtol=1e-8, atol=1e-8)
    assert r.reference_name == reference


def test_numpy_jacobian_reference():
    J = np.diag(2 * X.numpy())  # by hand
    r = gradarg.compare_vjp(square, X, V, reference=J)
    assert r.agree and r.reference_name == "jacobian"
    torch.testing.assert_close(r.reference, V * 2 * X, rtol=0, atol=0)


def test_torch_jacobian_reference():
    r = gradarg.compare_vjp(square, X, V, reference=torch.diag(2 * X))
    assert r.agree and r.reference_name == "jacobian"


def test_callable_vjp_reference():
    def vjp_by_hand(v):
        return 2 * X * v

    r = gradarg.compare_vjp(square, X, V, reference=vjp_by_hand)
    assert r.agree
    assert r.reference_name == "vjp_by_hand"
    torch.testing.assert_close(r.reference, V * 2 * X, rtol=0, atol=0)


def test_callable_reference_may_return_numpy():
    r = gradarg.compare_vjp(square, X, V, reference=lambda v: (2 * X * v).numpy())
    assert r.agree


def test_number_as_v_for_0d_output():
    r = gradarg.compare_vjp(lambda t: (t**2).sum(), X, 3.0)
    torch.testing.assert_close(r.backward, 3.0 * 2 * X, rtol=0, atol=0)
    assert r.agree


# --------------------------------------------------------------------------- shapes


def test_2d_output_contracts_v_over_both_output_dims():
    # Y = A X with X (3, 2): backward(V) = A^T V
    A = torch.tensor([[1.0, 2.0, 0.0], [-1.0, 0.5, 3.0]], dtype=F64)
    Xm = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=F64)
    Vm = torch.tensor([[1.0, -1.0], [2.0, 0.5]], dtype=F64)
    # dY[a, b]/dX[c, d] = A[a, c] delta_bd
    J = torch.einsum("ac,bd->abcd", A, torch.eye(2, dtype=F64))
    for reference in (*STRING_REFERENCES, J, J.numpy()):
        r = gradarg.compare_vjp(lambda t: A @ t, Xm, Vm, reference=reference)
        assert r.agree, reference
        torch.testing.assert_close(r.backward, A.T @ Vm, rtol=1e-14, atol=1e-14)
        torch.testing.assert_close(r.reference, A.T @ Vm, rtol=1e-8, atol=1e-8)


def test_0d_output():
    # y = sum(x^2): backward(v) = 2 v x
    v = torch.tensor(-2.0, dtype=F64)
    for reference in (*STRING_REFERENCES, 2 * X, (2 * X).numpy()):
        r = gradarg.compare_vjp(lambda t: (t**2).sum(), X, v, reference=reference)
        assert r.agree, reference
        torch.testing.assert_close(r.backward, -4.0 * X, rtol=0, atol=0)


def test_0d_input():
    x = torch.tensor(0.3, dtype=F64)
    r = gradarg.compare_vjp(torch.sin, x, torch.tensor(2.0, dtype=F64))
    assert r.agree
    torch.testing.assert_close(r.backward, 2 * torch.cos(x), rtol=0, atol=0)


def test_2d_input_to_0d_output_with_jacobian_of_input_shape():
    # y = prod(x) = 24: dy/dx_ij = 24 / x_ij, a Jacobian of shape () + x.shape
    Xm = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=F64)
    J = torch.tensor([[24 / 1, 24 / 2], [24 / 3, 24 / 4]], dtype=F64)
    r = gradarg.compare_vjp(torch.prod, Xm, 0.5, reference=J)
    assert r.agree
    torch.testing.assert_close(r.backward, 0.5 * J, rtol=1e-15, atol=0)


def test_complex_holomorphic_with_complex_v():
    z = torch.tensor([1.0 + 2.0j, -0.5 + 0.25j], dtype=torch.complex128)
    v = torch.tensor([1.0 - 1.0j, 2.0 + 0.5j], dtype=torch.complex128)
    for reference in ("finite-difference", "reverse"):
        r = gradarg.compare_vjp(lambda t: t**2, z, v, reference=reference)
        assert r.agree
        # PyTorch: backward(v) = v * conj(f'(z)) for holomorphic f
        torch.testing.assert_close(r.backward, v * (2 * z).conj(), rtol=1e-14, atol=1e-14)


def test_real_input_complex_output_forward_reference():
    # y = (1 + 2i) x, v complex: x.grad = Re(conj(v) (1 + 2i))
    v = torch.tensor([1.0 + 1.0j, -2.0 + 0.5j, 0.5j], dtype=torch.complex128)
    for reference in ("finite-difference", "forward"):
        r = gradarg.compare_vjp(lambda t: t * (1 + 2j), X, v, reference=reference)
        assert r.agree
        assert r.backward.dtype == F64
        torch.testing.assert_close(r.backward, (v.conj() * (1 + 2j)).real, rtol=1e-14,
                                   atol=1e-14)


def test_float32_uses_float32_tolerances():
    x = X.float()
    r = gradarg.compare_vjp(torch.sin, x, V.float())
    assert r.agree
    assert r.rtol == gradarg.backward_rtol(torch.float32) == 1e-5
    # atol: the float32 rounding allowance on max |v|ᵀ|J| = max |V cos X|, plus the (tiny,
    # float64) error estimate of the finite differences
    scale = float((V * torch.cos(X)).abs().max())
    assert 1e-5 * scale <= r.atol < 1e-5 * scale + 1e-8
    r = gradarg.compare_vjp(torch.sin, x, V.float(), reference=torch.diag(torch.cos(x)))
    assert (r.rtol, r.atol) == (1.3e-6, 1e-5)  # torch.testing.assert_close's float32 defaults


# --------------------------------------------------------------------------- the report


def test_tolerances_and_errors():
    fd = gradarg.compare_vjp(square, X, V)
    assert fd.rtol == gradarg.backward_rtol(F64) == 1e-10
    scale = float((V * 2 * X).abs().max())  # max |v|ᵀ|J| for J = diag(2x)
    assert 1e-10 * scale <= fd.atol < 1e-8
    assert 0.0 <= fd.max_abs_error < 1e-8
    exact = gradarg.compare_vjp(square, X, V, reference=torch.diag(2 * X))
    assert (exact.rtol, exact.atol) == (1e-7, 1e-7)  # assert_close's float64 defaults
    assert exact.max_abs_error == exact.max_rel_error == 0.0


def test_errors_are_measured_against_the_reference():
    # backward = v * 2x = [1, -20, -12]; the reference is off by 0.5 in the middle element
    def off(v):
        return 2 * X * v + torch.tensor([0.0, 0.5, 0.0], dtype=F64)

    r = gradarg.compare_vjp(square, X, V, reference=off)
    assert not r.agree and not bool(r)
    assert r.max_abs_error == pytest.approx(0.5)
    assert r.max_rel_error == pytest.approx(0.5 / 19.5)  # |ref| = |-20 + 0.5|
    loose = gradarg.compare_vjp(square, X, V, reference=off, atol=0.6)
    assert loose.agree and loose.atol == 0.6 and loose.rtol == 1e-7
    relative = gradarg.compare_vjp(square, X, V, reference=off, rtol=0.03, atol=0.0)
    assert relative.agree  # 0.5 <= 0.03 * 19.5


def test_str_is_a_text_table():
    r = gradarg.compare_vjp(square, torch.tensor([1.0, 2.0], dtype=F64),
                            torch.ones(2, dtype=F64), reference=np.diag([2.0, 4.0]))
    label = "x.grad from backward(gradient=v)"
    width = len(label)
    rows = [
        ("quantity", "value"),
        (label, "[2, 4]"),
        ("vᵀJ, reference: jacobian", "[2, 4]"),
        ("max abs error", "0.00e+00"),
        ("max rel error", "0.00e+00"),
        ("tolerance", "rtol=1.0e-07, atol=1.0e-07"),
        ("verdict", "agree"),
    ]
    assert str(r) == "\n".join(f"{a:<{width}}  {b}" for a, b in rows)


def test_str_says_disagree():
    r = gradarg.compare_vjp(square, X, V, reference=np.zeros((3, 3)))
    lines = str(r).splitlines()
    assert ["verdict", "DISAGREE"] in [line.split() for line in lines]
    assert lines[-1].startswith("note") and "the reference is all zeros" in lines[-1]


def test_repr_html_is_a_table():
    r = gradarg.compare_vjp(square, torch.tensor([1.0, 2.0], dtype=F64),
                            torch.ones(2, dtype=F64), reference=np.diag([2.0, 4.0]))
    html = r._repr_html_()
    assert html.startswith("<table") and html.endswith("</table>")
    assert "<th>quantity</th><th>value</th>" in html
    assert "<tr><td>x.grad from backward(gradient=v)</td><td>[2, 4]</td></tr>" in html
    assert "<tr><td>verdict</td><td>agree</td></tr>" in html
    assert html.count("<tr>") == 7  # header + 6 rows


def test_repr_markdown():
    r = gradarg.compare_vjp(square, torch.tensor([1.0, 2.0], dtype=F64),
                            torch.ones(2, dtype=F64), reference=np.diag([2.0, 4.0]))
    lines = r._repr_markdown_().splitlines()
    assert lines[:2] == ["| quantity | value |", "| --- | --- |"]
    assert lines[-1] == "| verdict | agree |"


def test_long_tensors_are_summarised_with_the_full_values_collapsed():
    x = torch.linspace(-1.0, 1.0, 30, dtype=F64)          # 30 > 8 entries
    r = gradarg.compare_vjp(square, x, torch.ones(30, dtype=F64), reference=np.diag(2 * x.numpy()))
    g = 2 * x.numpy()                                     # backward of x**2 with v = 1, by hand
    head = ", ".join(gradarg.fmt(e, 6) for e in g[:3])
    tail = ", ".join(gradarg.fmt(e, 6) for e in g[-2:])
    summary = f"[{head}, …, {tail}] (shape (30,), norm {gradarg.fmt(np.linalg.norm(g), 6)})"
    text = str(r)
    assert summary in text and gradarg.fmt(g[10], 6) not in text
    assert len(text.splitlines()) == 7
    html = r._repr_html_()
    assert html.count("<details") == 2 and html.count(f"<summary>{summary}</summary>") == 2
    full = html.split("<pre>")[1].split("</pre>")[0].replace("\n", " ")
    assert full == "[" + ", ".join(gradarg.fmt(e, 6) for e in g) + "]"
    md = r._repr_markdown_()
    assert f"| x.grad from backward(gradient=v) | {summary} |" in md
    assert "<details" in md and gradarg.fmt(g[10], 6) in md.split("<details")[1]


def test_short_tensors_print_whole():
    r = gradarg.compare_vjp(square, X, V)
    assert "[1, -20, -12]" in str(r) and "<details" not in r._repr_html_()


def test_result_is_frozen():
    r = gradarg.compare_vjp(square, X, V)
    with pytest.raises(AttributeError):
        r.agree = False


# --------------------------------------------------------------------------- output-tensor form


def test_output_tensor_form_with_jacobian():
    x = X.clone().requires_grad_(True)
    y = x**2
    r = gradarg.compare_vjp(y, x, V, reference=torch.diag(2 * X))
    assert r.agree
    torch.testing.assert_close(r.backward, V * 2 * X, rtol=0, atol=0)
    assert x.grad is None


def test_output_tensor_form_restores_existing_grad():
    x = X.clone().requires_grad_(True)
    previous = torch.tensor([7.0, 8.0, 9.0], dtype=F64)
    x.grad = previous
    y = torch.sin(x)
    r = gradarg.compare_vjp(y, x, V, reference=lambda v: torch.cos(X) * v)
    assert r.agree
    assert x.grad is previous
    assert torch.equal(x.grad, torch.tensor([7.0, 8.0, 9.0], dtype=F64))
    # the caller's graph is still usable
    y.backward(V)
    torch.testing.assert_close(x.grad, torch.tensor([7.0, 8.0, 9.0], dtype=F64) + torch.cos(X) * V)


def test_output_tensor_form_with_intermediate_tensor():
    # x need not be a leaf: the VJP at an intermediate h = 3 base
    base = torch.tensor([1.0, 2.0], dtype=F64, requires_grad=True)
    h = 3 * base
    y = h**2
    r = gradarg.compare_vjp(y, h, torch.ones(2, dtype=F64), reference=torch.diag(2 * h.detach()))
    assert r.agree
    assert base.grad is None


def test_output_tensor_form_with_string_reference_raises():
    x = X.clone().requires_grad_(True)
    with pytest.raises(ValueError, match="needs a function"):
        gradarg.compare_vjp(x**2, x, V, reference="finite-difference")
    assert x.grad is None


# --------------------------------------------------------------------------- randomness


@pytest.mark.parametrize("reference", STRING_REFERENCES)
def test_dropout_draws_the_same_mask_for_backward_and_reference(reference):
    x = torch.linspace(0.5, 2.0, 8, dtype=F64)
    state = torch.get_rng_state()
    r = gradarg.compare_vjp(lambda t: F.dropout(t, 0.5, training=True) * t, x,
                            torch.ones(8, dtype=F64), reference=reference)
    assert r.agree
    assert torch.equal(torch.get_rng_state(), state)


# --------------------------------------------------------------------------- wrong backwards


class _Unary(torch.autograd.Function):
    """y = f(x) with a correct forward-mode formula (``jvp``) and a backward chosen by subclasses."""

    generate_vmap_rule = True

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)
        ctx.save_for_forward(x)


class SquareNoFactor2(_Unary):
    @staticmethod
    def forward(x):
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x  # WRONG: d(x^2)/dx = 2x

    @staticmethod
    def jvp(ctx, t):
        (x,) = ctx.saved_tensors
        return 2 * x * t


class SquareOK(SquareNoFactor2):
    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * g * x


class SinWrongSign(_Unary):
    @staticmethod
    def forward(x):
        return torch.sin(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return -g * torch.cos(x)  # WRONG: sin' = cos

    @staticmethod
    def jvp(ctx, t):
        (x,) = ctx.saved_tensors
        return torch.cos(x) * t


class SinOK(SinWrongSign):
    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * torch.cos(x)


A = torch.tensor([[1.0, 2.0, 0.0], [-1.0, 0.5, 3.0], [4.0, 0.0, -2.0]], dtype=F64)
assert not torch.equal(A, A.T)


class MatmulTransposed(torch.autograd.Function):
    """y = x @ A; the backward uses A where A^T belongs."""

    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x @ A

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, g):
        return g @ A  # WRONG: d(x @ A) with upstream g is g @ A^T

    @staticmethod
    def jvp(ctx, t):
        return t @ A


class MatmulOK(MatmulTransposed):
    @staticmethod
    def backward(ctx, g):
        return g @ A.T


WRONG = [
    pytest.param(SquareNoFactor2, X, V, id="x**2 missing factor 2"),
    pytest.param(SinWrongSign, X, V, id="sin' with wrong sign"),
    pytest.param(MatmulTransposed, torch.tensor([1.0, -2.0, 0.5], dtype=F64), V,
                 id="x@A with A instead of A.T"),
]
RIGHT = [
    pytest.param(SquareOK, X, V, id="x**2"),
    pytest.param(SinOK, X, V, id="sin"),
    pytest.param(MatmulOK, torch.tensor([1.0, -2.0, 0.5], dtype=F64), V, id="x@A"),
]


@pytest.mark.parametrize("reference", ("finite-difference", "forward"))
@pytest.mark.parametrize(("fn", "x", "v"), WRONG)
def test_wrong_backward_is_caught(fn, x, v, reference):
    r = gradarg.compare_vjp(fn.apply, x, v, reference=reference)
    assert r.agree is False
    assert r.max_abs_error > 0.1
    assert "DISAGREE" in str(r)


@pytest.mark.parametrize(("fn", "x", "v"), WRONG)
def test_reverse_reference_is_not_independent_of_the_backward(fn, x, v):
    # the reverse-mode Jacobian is built from the same wrong backward, so it "agrees"
    assert gradarg.compare_vjp(fn.apply, x, v, reference="reverse").agree


@pytest.mark.parametrize("reference", STRING_REFERENCES)
@pytest.mark.parametrize(("fn", "x", "v"), RIGHT)
def test_correct_backward_agrees(fn, x, v, reference):
    assert gradarg.compare_vjp(fn.apply, x, v, reference=reference).agree


def test_wrong_backward_values_by_hand():
    r = gradarg.compare_vjp(MatmulTransposed.apply, torch.tensor([1.0, -2.0, 0.5], dtype=F64), V,
                            reference=A.T)  # J of x @ A is A^T
    torch.testing.assert_close(r.backward, V @ A, rtol=0, atol=0)
    torch.testing.assert_close(r.reference, V @ A.T, rtol=0, atol=0)
    assert not r.agree


def test_old_style_wrong_backward_caught_by_finite_differences():
    assert not gradarg.compare_vjp(SquareMissingFactor.apply, X, V).agree
    assert not gradarg.compare_vjp(SquareMissingFactor.apply, X, V,
                                   reference=torch.diag(2 * X)).agree
