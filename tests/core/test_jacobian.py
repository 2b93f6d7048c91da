"""gradarg.jacobian against Jacobians derived by hand, on every route.

Every expected value below is a formula written out in the test (``torch.diag(2 * x)``, ``M.T``,
...), never a number copied from the code under test.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch.autograd.functional import jacobian as torch_jacobian

import gradarg

F64 = torch.float64
METHODS = ("auto", "reverse", "forward", "finite-difference")
AUTODIFF = ("auto", "reverse", "forward")


def tol(method: str, dtype: torch.dtype = F64) -> dict[str, float]:
    if method == "finite-difference":
        t = gradarg.fd_tolerance(dtype)
        return {"rtol": t, "atol": t}
    real = torch.empty((), dtype=dtype).real.dtype
    return {"rtol": 1e-12, "atol": 1e-12} if real == F64 else {"rtol": 1e-6, "atol": 1e-6}


def assert_jac(got, expected, method, dtype=F64):
    """Shape, dtype and values of one block; tuples are compared block by block."""
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected)
        for g, e in zip(got, expected, strict=True):
            assert_jac(g, e, method, dtype)
        return
    assert isinstance(got, torch.Tensor)
    assert got.shape == expected.shape
    assert got.dtype == expected.dtype
    torch.testing.assert_close(got, expected, **tol(method, dtype))


def diag_block(d: torch.Tensor) -> torch.Tensor:
    """Jacobian of an elementwise map with derivative d (any shape): shape d.shape + d.shape."""
    return torch.diag(d.reshape(-1)).reshape(d.shape + d.shape)


X3 = torch.tensor([0.5, -1.0, 2.0], dtype=F64)


# --------------------------------------------------------------------------- hand-derived


@pytest.mark.parametrize("method", METHODS)
class TestHandDerived:
    def test_square(self, method):
        assert_jac(gradarg.jacobian(lambda t: t**2, X3, method=method), torch.diag(2 * X3), method)

    def test_cubic_polynomial(self, method):
        # f(x) = x^3 - 2x + 1  ->  f'(x) = 3x^2 - 2
        fn = lambda t: t**3 - 2 * t + 1
        assert_jac(gradarg.jacobian(fn, X3, method=method), torch.diag(3 * X3**2 - 2), method)

    def test_coupled_polynomial(self, method):
        # y0 = a^2 b, y1 = a + b^3
        a, b = 1.5, -0.5
        x = torch.tensor([a, b], dtype=F64)
        fn = lambda t: torch.stack([t[0] ** 2 * t[1], t[0] + t[1] ** 3])
        expected = torch.tensor([[2 * a * b, a**2], [1.0, 3 * b**2]], dtype=F64)
        assert_jac(gradarg.jacobian(fn, x, method=method), expected, method)

    def test_log(self, method):
        x = torch.tensor([0.5, 1.0, 3.0], dtype=F64)
        assert_jac(gradarg.jacobian(torch.log, x, method=method), torch.diag(1 / x), method)

    def test_sin_of_matrix(self, method):
        x = torch.tensor([[0.1, 0.2, 0.3], [-1.0, 2.0, 0.5]], dtype=F64)
        assert_jac(gradarg.jacobian(torch.sin, x, method=method), diag_block(torch.cos(x)), method)

    def test_row_vector_times_matrix(self, method):
        # y_i = sum_j x_j M[j, i]  ->  dy_i/dx_j = M[j, i]:  J = M^T
        M = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=F64)
        x = torch.tensor([0.5, -2.0], dtype=F64)
        assert_jac(gradarg.jacobian(lambda t: t @ M, x, method=method), M.T, method)

    def test_matrix_times_vector(self, method):
        # y = M x  ->  J = M
        M = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, -6.0]], dtype=F64)
        x = torch.tensor([0.5, -2.0], dtype=F64)
        assert_jac(gradarg.jacobian(lambda t: M @ t, x, method=method), M, method)

    def test_matrix_times_matrix(self, method):
        # Y = X M: Y[a, b] = sum_k X[a, k] M[k, b]  ->  dY[a, b]/dX[c, d] = delta_ac M[d, b]
        M = torch.tensor([[1.0, 2.0, 0.0], [3.0, -1.0, 2.0]], dtype=F64)
        X = torch.tensor([[2.0, 1.0], [0.0, -1.0], [1.0, 1.0], [4.0, 0.5]], dtype=F64)
        expected = torch.einsum("ac,db->abcd", torch.eye(4, dtype=F64), M)
        got = gradarg.jacobian(lambda t: t @ M, X, method=method)
        assert got.shape == (4, 3, 4, 2)
        assert_jac(got, expected, method)

    def test_sum_and_mean(self, method):
        x = torch.arange(6, dtype=F64).reshape(2, 3)
        assert_jac(gradarg.jacobian(torch.sum, x, method=method), torch.ones(2, 3, dtype=F64),
                   method)
        assert_jac(gradarg.jacobian(torch.mean, x, method=method),
                   torch.full((2, 3), 1 / 6, dtype=F64), method)

    def test_sum_over_dim(self, method):
        # y[b] = sum_a x[a, b]  ->  dy[b]/dx[a, c] = delta_bc
        x = torch.arange(6, dtype=F64).reshape(2, 3)
        expected = torch.eye(3, dtype=F64)[:, None, :].expand(3, 2, 3)
        assert_jac(gradarg.jacobian(lambda t: t.sum(0), x, method=method), expected, method)

    def test_softmax(self, method):
        # s = softmax(x): ds_i/dx_j = s_i (delta_ij - s_j)
        x = torch.tensor([0.1, -0.4, 1.2, 0.0], dtype=F64)
        s = torch.exp(x) / torch.exp(x).sum()
        expected = torch.diag(s) - torch.outer(s, s)
        assert_jac(gradarg.jacobian(lambda t: torch.softmax(t, 0), x, method=method), expected,
                   method)

    def test_elementwise_of_two_dims_matches_diag_formula(self, method):
        x = torch.tensor([[0.5, 1.0], [-2.0, 3.0]], dtype=F64)
        got = gradarg.jacobian(lambda t: t**2, x, method=method)
        assert_jac(got, torch.diag(2 * x.reshape(-1)).reshape(2, 2, 2, 2), method)


# --------------------------------------------------------------------------- shapes and layouts


@pytest.mark.parametrize("method", METHODS)
class TestShapes:
    def test_0d_input_vector_output(self, method):
        x = torch.tensor(0.7, dtype=F64)
        fn = lambda t: torch.stack([t, t**2, torch.sin(t)])
        expected = torch.stack([torch.ones((), dtype=F64), 2 * x, torch.cos(x)])
        got = gradarg.jacobian(fn, x, method=method)
        assert got.shape == (3,)
        assert_jac(got, expected, method)

    def test_0d_input_0d_output(self, method):
        x = torch.tensor(0.3, dtype=F64)
        got = gradarg.jacobian(torch.sin, x, method=method)
        assert got.shape == ()
        assert_jac(got, torch.cos(x), method)

    def test_vector_input_0d_output(self, method):
        got = gradarg.jacobian(lambda t: (t**2).sum(), X3, method=method)
        assert got.shape == (3,)
        assert_jac(got, 2 * X3, method)

    @pytest.mark.parametrize(
        "make",
        [
            pytest.param(lambda: torch.arange(1.0, 7.0, dtype=F64).reshape(2, 3).T, id="x.T"),
            pytest.param(lambda: torch.arange(1.0, 9.0, dtype=F64)[::2], id="x[::2]"),
            pytest.param(lambda: torch.arange(1.0, 13.0, dtype=F64).reshape(3, 4)[:, 1], id="column"),
            pytest.param(lambda: torch.arange(1.0, 7.0, dtype=F64).reshape(2, 3)[1], id="row view"),
            pytest.param(lambda: torch.tensor([[1.0], [2.0]], dtype=F64).expand(2, 3), id="expand"),
            pytest.param(lambda: torch.arange(1.0, 13.0, dtype=F64).reshape(2, 2, 3).permute(2, 0, 1),
                         id="permute"),
        ],
    )
    def test_strided_and_view_inputs(self, method, make):
        x = make()
        strides = x.stride()
        C = torch.arange(1.0, x.numel() + 1, dtype=F64).reshape(x.shape)  # not symmetric
        # y = C * x^2 elementwise, in x's logical (row-major) order whatever its strides
        got = gradarg.jacobian(lambda t: C * t**2, x, method=method)
        assert_jac(got, diag_block(2 * C * x), method)
        assert x.stride() == strides

    def test_transposed_input_through_matmul(self, method):
        # y = x.T-shaped input X (3, 2) times M (2, 2): dY[a, b]/dX[c, d] = delta_ac M[d, b]
        X = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=F64).T
        M = torch.tensor([[1.0, -1.0], [2.0, 0.5]], dtype=F64)
        expected = torch.einsum("ac,db->abcd", torch.eye(3, dtype=F64), M)
        assert_jac(gradarg.jacobian(lambda t: t @ M, X, method=method), expected, method)


# --------------------------------------------------------------------------- dependence


@pytest.mark.parametrize("method", METHODS)
class TestDependence:
    def test_output_not_depending_on_input_gives_zeros(self, method):
        got = gradarg.jacobian(lambda t: torch.ones(2, dtype=F64), X3, method=method)
        assert_jac(got, torch.zeros(2, 3, dtype=F64), method)

    def test_captured_constant_output_gives_zeros(self, method):
        c = torch.tensor([[1.0, 2.0]], dtype=F64)
        assert_jac(gradarg.jacobian(lambda t: c, X3, method=method), torch.zeros(1, 2, 3, dtype=F64),
                   method)

    def test_detached_output(self, method):
        # autodiff treats a detached value as a constant; finite differences see through it
        got = gradarg.jacobian(lambda t: t.detach() * 2, X3, method=method)
        scale = 2.0 if method == "finite-difference" else 0.0
        assert_jac(got, scale * torch.eye(3, dtype=F64), method)

    def test_output_depending_on_some_elements(self, method):
        x = torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=F64)
        expected = torch.tensor([[3.0, 0, 0, 0], [0, 3.0, 0, 0]], dtype=F64)
        assert_jac(gradarg.jacobian(lambda t: 3 * t[:2], x, method=method), expected, method)

    def test_last_element_only(self, method):
        x = torch.tensor([1.0, 2.0, 3.0], dtype=F64)
        expected = torch.tensor([0.0, 0.0, 2 * 3.0], dtype=F64)
        assert_jac(gradarg.jacobian(lambda t: t[-1] ** 2, x, method=method), expected, method)

    def test_tuple_output_with_a_constant_part(self, method):
        got = gradarg.jacobian(lambda t: (t**2, torch.zeros(2, dtype=F64)), X3, method=method)
        assert_jac(got, (torch.diag(2 * X3), torch.zeros(2, 3, dtype=F64)), method)

    def test_unused_input_gives_zero_block(self, method):
        a, b = X3, torch.tensor([1.0, 2.0], dtype=F64)
        got = gradarg.jacobian(lambda p, q: 2 * p, (a, b), method=method)
        assert_jac(got, (2 * torch.eye(3, dtype=F64), torch.zeros(3, 2, dtype=F64)), method)


# --------------------------------------------------------------------------- tuples


@pytest.mark.parametrize("method", METHODS)
class TestTuples:
    a = torch.tensor([0.5, -1.0, 2.0], dtype=F64)
    b = torch.tensor([1.5, 2.0, -0.5], dtype=F64)

    def test_tuple_inputs_tuple_outputs(self, method):
        # y0 = a * b: (diag(b), diag(a));  y1 = sum(a^2) (0-d): (2a, 0)
        fn = lambda p, q: (p * q, (p**2).sum())
        got = gradarg.jacobian(fn, (self.a, self.b), method=method)
        expected = (
            (torch.diag(self.b), torch.diag(self.a)),
            (2 * self.a, torch.zeros(3, dtype=F64)),
        )
        assert_jac(got, expected, method)
        # the nesting of torch.autograd.functional.jacobian
        assert_jac(got, torch_jacobian(fn, (self.a, self.b)), method)

    def test_tuple_inputs_tensor_output(self, method):
        got = gradarg.jacobian(torch.atan2, (self.a, self.b), method=method)
        r2 = self.a**2 + self.b**2
        # d atan2(y, x)/dy = x / (x^2 + y^2);  d/dx = -y / (x^2 + y^2)
        assert_jac(got, (torch.diag(self.b / r2), torch.diag(-self.a / r2)), method)

    def test_tensor_input_tuple_output(self, method):
        got = gradarg.jacobian(lambda t: (t.sin(), t.exp()), self.a, method=method)
        assert_jac(got, (torch.diag(self.a.cos()), torch.diag(self.a.exp())), method)

    def test_one_element_tuple_input_stays_a_tuple(self, method):
        got = gradarg.jacobian(lambda t: 3 * t, (self.a,), method=method)
        assert_jac(got, (3 * torch.eye(3, dtype=F64),), method)

    def test_list_input_is_a_sequence_of_inputs(self, method):
        got = gradarg.jacobian(lambda p, q: p * q, [self.a, self.b], method=method)
        assert_jac(got, (torch.diag(self.b), torch.diag(self.a)), method)

    def test_inputs_of_different_shapes(self, method):
        # y = p[0] * q (q of shape (2, 2)): dy/dp = q at column 0, dy/dq = p[0] * I
        p = torch.tensor([2.0, 5.0], dtype=F64)
        q = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=F64)
        got = gradarg.jacobian(lambda s, t: s[0] * t, (p, q), method=method)
        jp = torch.zeros(2, 2, 2, dtype=F64)
        jp[..., 0] = q
        jq = 2.0 * torch.eye(4, dtype=F64).reshape(2, 2, 2, 2)
        assert_jac(got, (jp, jq), method)


# --------------------------------------------------------------------------- dtypes


@pytest.mark.parametrize("method", METHODS)
def test_float32_keeps_dtype(method):
    x = torch.tensor([0.5, -1.0, 2.0])
    got = gradarg.jacobian(torch.tanh, x, method=method)
    assert got.dtype == torch.float32
    assert_jac(got, torch.diag(1 - torch.tanh(x) ** 2), method, torch.float32)


@pytest.mark.parametrize("method", METHODS)
def test_float64_keeps_dtype(method):
    assert gradarg.jacobian(torch.tanh, X3, method=method).dtype == F64


Z = torch.tensor([1.0 + 2.0j, -0.5 + 0.25j, 3.0 - 1.0j], dtype=torch.complex128)


@pytest.mark.parametrize("method", ("auto", "reverse", "finite-difference"))
class TestComplex:
    def test_holomorphic_gives_conjugate_derivative(self, method):
        # PyTorch's convention: J = conj(f'(z)) for holomorphic f; f = z^2 -> conj(2z)
        got = gradarg.jacobian(lambda t: t**2, Z, method=method)
        assert_jac(got, torch.diag((2 * Z).conj()), method, torch.complex128)

    def test_squared_modulus(self, method):
        # |z|^2 = z conj(z), a real function of z: PyTorch's gradient is 2z
        for fn in (lambda t: t * t.conj(), lambda t: t.abs() ** 2):
            got = gradarg.jacobian(fn, Z, method=method)
            assert_jac(got, torch.diag(2 * Z), method, torch.complex128)

    def test_real_input_complex_output_is_refused_as_torch_refuses_it(self, method):
        # y = (1 + 2i) x: one-hot real cotangents would give Re(1 + 2i) = 1 per element;
        # torch.func.jacrev and torch.autograd.functional.jacobian's default refuse it
        fn = lambda t: t * (1 + 2j)
        with pytest.raises(RuntimeError, match="real"):
            torch.func.jacrev(fn)(X3)
        with pytest.raises(RuntimeError, match="real scalar outputs"):
            torch_jacobian(fn, X3)
        with pytest.raises(ValueError, match=r"output of <lambda> is complex .* input x is "
                                             r"real.*method='forward'"):
            gradarg.jacobian(fn, X3, method=method)


def test_forward_of_real_input_complex_output_is_the_complex_derivative():
    # what torch's own forward mode gives (torch.autograd.functional.jacobian's forward-mode)
    fn = lambda t: t * (1 + 2j)
    want = torch_jacobian(fn, X3, vectorize=True, strategy="forward-mode")
    assert want.dtype == torch.complex128
    got = gradarg.jacobian(fn, X3, method="forward")
    assert_jac(got, want, "forward", torch.complex128)
    got = torch.func.vmap(lambda t: gradarg.jacobian(fn, t, method="forward"))(X3[None])[0]
    assert_jac(got, want, "forward", torch.complex128)


@pytest.mark.parametrize("method", ["auto", "reverse", "finite-difference"])
def test_real_input_complex_output_is_refused_per_block(method):
    # a tuple of outputs, one complex: the message names that output and the real input
    fn = lambda a, b: (a * b, a * (1 + 1j))
    with pytest.raises(ValueError, match=r"output 1 of <lambda> is complex .* input 0 is real"):
        gradarg.jacobian(fn, (X3, X3), method=method)
    # inside a transform too
    with pytest.raises(ValueError, match="is complex"):
        torch.func.grad(lambda t: gradarg.jacobian(lambda s: s * (1 + 2j), t,
                                                   method=method).abs().sum())(X3)


# --------------------------------------------------------------------------- route choice


class HalfBackward(torch.autograd.Function):
    """y = x^2 with a correct forward-mode formula and a backward missing the factor 2."""

    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x * x

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)
        ctx.save_for_forward(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x  # wrong on purpose: d(x^2)/dx = 2x

    @staticmethod
    def jvp(ctx, t):
        (x,) = ctx.saved_tensors
        return 2 * x * t


def test_auto_uses_reverse_with_no_more_outputs_than_inputs():
    # reverse mode sees the wrong backward: diag(x) instead of diag(2x)
    assert_jac(gradarg.jacobian(HalfBackward.apply, X3), torch.diag(X3), "auto")
    assert_jac(gradarg.jacobian(HalfBackward.apply, X3, method="forward"), torch.diag(2 * X3),
               "forward")


def test_auto_uses_forward_with_more_outputs_than_inputs():
    fn = lambda t: HalfBackward.apply(t.repeat(2))
    expected = torch.cat([torch.diag(2 * X3)] * 2)
    assert_jac(gradarg.jacobian(fn, X3), expected, "auto")


def test_auto_falls_back_to_reverse_without_forward_formula():
    # cdist has no forward-mode formula in torch; with 2 x 5 outputs > 4 inputs auto tries
    # forward first.  d_ij = |x_i - p_j|  ->  dd_ij/dx_k = delta_ik (x_i - p_j) / d_ij
    x = torch.tensor([[0.0, 1.0], [2.0, -1.0]], dtype=F64)
    P = torch.tensor([[1.0, 1.0], [0.5, -2.0], [3.0, 0.0], [-1.0, -1.0], [2.0, 2.0]], dtype=F64)
    fn = lambda t: torch.cdist(t, P)
    diff = x[:, None, :] - P[None, :, :]
    expected = torch.einsum("ik,ijl->ijkl", torch.eye(2, dtype=F64),
                            diff / diff.norm(dim=-1, keepdim=True))
    with pytest.raises(NotImplementedError):
        gradarg.jacobian(fn, x, method="forward")
    assert_jac(gradarg.jacobian(fn, x), expected, "auto")
    assert_jac(gradarg.jacobian(fn, x, method="reverse", vectorize=False), expected, "reverse")


# --------------------------------------------------------------------------- random draws


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("vectorize", [None, False])
class TestRandomness:
    def test_dropout_mask_is_the_callers_next_draw(self, method, vectorize):
        x = torch.linspace(0.5, 2.0, 8, dtype=F64)
        fn = lambda t: F.dropout(t, p=0.5, training=True) * t
        torch.manual_seed(3)
        state = torch.get_rng_state()
        keep = F.dropout(torch.ones(8, dtype=F64), p=0.5) != 0  # the mask fn would draw now
        torch.set_rng_state(state)
        assert 0 < int(keep.sum()) < 8
        # y = 2 keep * x^2 (inverted dropout scales by 1 / (1 - p) = 2)  ->  J = diag(4 keep x)
        got = gradarg.jacobian(fn, x, method=method, vectorize=vectorize)
        assert_jac(got, torch.diag(4 * keep * x), method)
        assert torch.equal(torch.get_rng_state(), state)

    def test_additive_noise_cancels(self, method, vectorize):
        # y = x + noise: J = I only if every evaluation draws the same noise
        fn = lambda t: t + torch.randn_like(t)
        got = gradarg.jacobian(fn, X3, method=method, vectorize=vectorize)
        assert_jac(got, torch.eye(3, dtype=F64), method)

    def test_more_outputs_than_inputs(self, method, vectorize):
        # auto takes forward mode here; y = r * [x, x] with r = the caller's next draw
        fn = lambda t: torch.rand(6, dtype=F64) * t.repeat(2)
        state = torch.get_rng_state()
        r = torch.rand(6, dtype=F64)
        torch.set_rng_state(state)
        got = gradarg.jacobian(fn, X3, method=method, vectorize=vectorize)
        assert_jac(got, r[:, None] * torch.eye(3, dtype=F64).repeat(2, 1), method)
        assert torch.equal(torch.get_rng_state(), state)


# --------------------------------------------------------------------------- unbatchable functions


class NumpyCube(torch.autograd.Function):
    """x^3 computed in NumPy, forward and backward: nothing here can be batched by vmap."""

    @staticmethod
    def forward(x):
        return torch.from_numpy(x.detach().numpy() ** 3)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return torch.from_numpy(3 * x.detach().numpy() ** 2 * g.detach().numpy())


class OldStyleCube(torch.autograd.Function):
    """Old-style Function (forward takes ctx): torch.func transforms refuse it."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * x**2 * g


def data_dependent(t):
    """Python control flow on a value: .item() cannot be batched."""
    if t.sum().item() > 0:
        return t**2
    return -t


def make_running_stat_fn():
    stats = torch.zeros((), dtype=F64)

    def fn(t):
        stats.mul_(0.9).add_(0.1 * t.detach().mean())  # in-place update of a captured buffer
        return t**2

    return fn, stats


def make_buffer_copy_fn():
    buf = torch.zeros(3, dtype=F64)

    def fn(t):
        buf.copy_(t)  # writes the input into a captured buffer, then uses the buffer
        return buf * t

    return fn


@pytest.mark.parametrize("vectorize", [None, False])
class TestUnbatchable:
    @pytest.mark.parametrize("method", ("auto", "reverse", "finite-difference"))
    def test_numpy_function(self, method, vectorize):
        got = gradarg.jacobian(NumpyCube.apply, X3, method=method, vectorize=vectorize)
        assert_jac(got, torch.diag(3 * X3**2), method)

    @pytest.mark.parametrize("method", ("auto", "reverse", "finite-difference"))
    def test_old_style_function(self, method, vectorize):
        got = gradarg.jacobian(OldStyleCube.apply, X3, method=method, vectorize=vectorize)
        assert_jac(got, torch.diag(3 * X3**2), method)

    @pytest.mark.parametrize("method", METHODS)
    # the .item() steers control flow only: the GraphCutWarning (tests/test_edge_cuts.py)
    # says the derivative is right there
    @pytest.mark.filterwarnings("ignore::gradarg.core.cuts.GraphCutWarning")
    def test_item_and_data_dependent_control_flow(self, method, vectorize):
        # sum(X3) > 0 -> the t^2 branch
        got = gradarg.jacobian(data_dependent, X3, method=method, vectorize=vectorize)
        assert_jac(got, torch.diag(2 * X3), method)
        neg = -X3
        got = gradarg.jacobian(data_dependent, neg, method=method, vectorize=vectorize)
        assert_jac(got, -torch.eye(3, dtype=F64), method)

    @pytest.mark.parametrize("method", METHODS)
    def test_in_place_update_of_captured_buffer(self, method, vectorize):
        fn, stats = make_running_stat_fn()
        got = gradarg.jacobian(fn, X3, method=method, vectorize=vectorize)
        assert_jac(got, torch.diag(2 * X3), method)
        assert stats.item() != 0.0  # fn did run and update its buffer

    @pytest.mark.parametrize("method", METHODS)
    def test_input_copied_into_captured_buffer(self, method, vectorize):
        # y = buf * x with buf = x  ->  J = diag(2x)
        got = gradarg.jacobian(make_buffer_copy_fn(), X3, method=method, vectorize=vectorize)
        assert_jac(got, torch.diag(2 * X3), method)


class TestVectorizeFlag:
    def test_forward_true_on_unbatchable_raises(self):
        stats = torch.zeros((), dtype=F64)

        def fn(t):  # cumsum: no fast older rule, so torch.func.vmap, which refuses the update
            stats.mul_(0.9).add_(0.1 * t.detach().mean())
            return t.cumsum(0) ** 2

        with pytest.raises(gradarg.VectorizationError, match="vmap"):
            gradarg.jacobian(fn, X3, method="forward", vectorize=True)

    def test_forward_true_batches_a_buffer_update_as_torch_does(self):
        # torch's own vectorized forward mode (dual tensors, older batching rules) keeps the
        # primal unbatched, so the captured buffer's update runs once, as in one plain call
        fn, stats = make_running_stat_fn()
        got = gradarg.jacobian(fn, X3, method="forward", vectorize=True)
        torch.testing.assert_close(got, torch.diag(2 * X3), rtol=0, atol=0)
        want = torch.autograd.functional.jacobian(
            make_running_stat_fn()[0], X3, vectorize=True, strategy="forward-mode"
        )
        torch.testing.assert_close(got, want, rtol=0, atol=0)
        assert stats.item() != 0.0

    def test_reverse_true_on_unbatchable_backward_raises(self):
        with pytest.raises(gradarg.VectorizationError, match="vmap"):
            gradarg.jacobian(NumpyCube.apply, X3, method="reverse", vectorize=True)

    def test_vectorization_error_is_a_runtime_error(self):
        assert issubclass(gradarg.VectorizationError, RuntimeError)

    def test_true_does_not_hide_errors_of_fn_itself(self):
        # a non-differentiable output is the caller's mistake, not a batching failure
        for method in ("auto", "reverse", "forward"):
            with pytest.raises(TypeError, match="not differentiable"):
                gradarg.jacobian(lambda t: t.argmax(), X3, method=method, vectorize=True)

    @pytest.mark.parametrize("method", METHODS)
    @pytest.mark.parametrize(
        ("fn", "x"),
        [
            pytest.param(lambda t: t**3 - t, X3, id="poly"),
            pytest.param(lambda t: torch.softmax(t @ t.T, -1), torch.ones(2, 3, dtype=F64) / 3,
                         id="softmax"),
            pytest.param(lambda p, q: (p * q, p.sum()), (X3, 2 * X3), id="tuples"),
            pytest.param(lambda t: t.repeat(3).sin(), X3, id="m>n"),
        ],
    )
    def test_false_and_true_give_the_same_as_none(self, method, fn, x):
        default = gradarg.jacobian(fn, x, method=method)
        for flag in (False, True):
            assert_jac(gradarg.jacobian(fn, x, method=method, vectorize=flag), default, method)

    @pytest.mark.parametrize("method", ("auto", "reverse", "finite-difference"))
    def test_false_same_as_none_complex(self, method):
        fn = lambda t: t**2 * t.conj()
        default = gradarg.jacobian(fn, Z, method=method)
        assert_jac(gradarg.jacobian(fn, Z, method=method, vectorize=False), default, method,
                   torch.complex128)


# --------------------------------------------------------------------------- results are plain tensors


@pytest.mark.parametrize("method", METHODS)
def test_jacobian_of_module_with_parameters_is_detached(method):
    lin = torch.nn.Linear(3, 4).double()  # parameters require grad
    x = torch.tensor([0.5, -1.0, 2.0], dtype=F64)
    got = gradarg.jacobian(lin, x, method=method)
    assert not got.requires_grad and got.grad_fn is None
    assert_jac(got, lin.weight.detach(), method)  # y = W x + b  ->  J = W
    assert lin.weight.grad is None


def test_jacobian_converts_to_numpy():
    J = gradarg.jacobian(lambda t: t**2, X3)
    np.testing.assert_allclose(J.numpy(), np.diag(2 * X3.numpy()), rtol=1e-15)


def test_auto_remembers_forward_choice_and_skips_the_probe():
    W = torch.randn(12, 3, dtype=torch.float64)
    calls = []

    def tall(t):
        calls.append(1)
        return torch.tanh(W @ t)

    x = torch.randn(3, dtype=torch.float64)
    expected = torch.diag(1 - torch.tanh(W @ x) ** 2) @ W
    first = gradarg.jacobian(tall, x)
    n_first = len(calls)
    second = gradarg.jacobian(tall, x)
    assert len(calls) - n_first < n_first  # the probe forward pass is skipped
    torch.testing.assert_close(first, expected)
    torch.testing.assert_close(second, expected)


def test_remembered_choice_never_changes_the_result():
    """The memory is keyed on input shapes only; an output whose size changes is still right."""
    state = {"rows": 8}

    def varying(t):
        return t.repeat(state["rows"])

    x = torch.randn(2, dtype=torch.float64)
    gradarg.jacobian(varying, x)  # tall: forward mode remembered
    state["rows"] = 1  # now square: reverse would be chosen, forward is remembered
    torch.testing.assert_close(gradarg.jacobian(varying, x), torch.eye(2, dtype=torch.float64))
