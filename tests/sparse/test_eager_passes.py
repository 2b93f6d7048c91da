"""The eager JVPs and Hessian products (gradarg.sparse.passes: two backward passes, torch's
forward mode where a custom autograd.Function is in the graph) against torch.func's own
Jacobians and Hessians, including the functions where a second backward pass would be wrong."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.autograd.function import once_differentiable

import gradarg

F64 = torch.float64
N = 7


def _x() -> torch.Tensor:
    return torch.linspace(-0.9, 1.3, N, dtype=F64)


def _band(k: int = 1) -> torch.Tensor:
    i = torch.arange(N)
    return (i[:, None] - i[None, :]).abs() <= k


def _cube(backward):
    """``u³`` as a custom Function with a ``jvp`` and the given ``backward(u, g)``."""

    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(u):
            return u**3

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])
            ctx.u = inputs[0]  # forward mode reads it here

        @staticmethod
        def backward(ctx, g):
            (u,) = ctx.saved_tensors
            return backward(u, g)

        @staticmethod
        def jvp(ctx, t):
            return 3 * ctx.u**2 * t

    return Cube


# a backward that cannot be differentiated again
OnceCube = _cube(once_differentiable(lambda u, g: 3 * u**2 * g))
# a backward through NumPy: no graph at all
NumpyCube = _cube(lambda u, g: torch.from_numpy(3 * u.detach().numpy() ** 2
                                                * g.detach().numpy()))


def stencil(u):
    up = torch.nn.functional.pad(u, (1, 1))
    return torch.sin(up[:-2] * u) + torch.exp(up[2:]) * u.abs() + torch.where(u > 0, u, u**2)


JACOBIAN_FNS = {
    "stencil": (stencil, lambda u: torch.func.jacfwd(stencil)(u)),
    "once_differentiable + ops": (
        lambda u: OnceCube.apply(u) + torch.sin(u),
        lambda u: torch.diag(3 * u**2 + torch.cos(u))),
    "numpy backward + ops": (
        lambda u: NumpyCube.apply(u) * 2 + u**2,
        lambda u: torch.diag(6 * u**2 + 2 * u)),
    "zero derivative (round)": (lambda u: torch.round(u) + 0 * u,
                                lambda u: torch.zeros(N, N, dtype=F64)),
}


@pytest.mark.parametrize("method", ["forward", "reverse"])
@pytest.mark.parametrize("name", list(JACOBIAN_FNS))
def test_jacobian_modes_against_a_reference(name, method):
    fn, reference = JACOBIAN_FNS[name]
    x = _x()
    got = gradarg.SparseJacobian(_band(), method=method)(fn, x).to_dense()
    torch.testing.assert_close(got, reference(x), rtol=1e-12, atol=1e-12)


def energy(u):
    return torch.cosh(u[1:] - u[:-1]).sum() + (u**4).sum()


HESSIAN_FNS = {
    "energy": (energy, lambda u: torch.func.hessian(energy)(u)),
    "once_differentiable + ops": (
        lambda u: OnceCube.apply(u).sum() + (u**4).sum(),
        lambda u: torch.diag(6 * u + 12 * u**2)),
    "linear (zero Hessian)": (lambda u: (3 * u).sum(), lambda u: torch.zeros(N, N, dtype=F64)),
}


@pytest.mark.parametrize("name", list(HESSIAN_FNS))
def test_hessian_against_a_reference(name):
    f, reference = HESSIAN_FNS[name]
    x = _x()
    got = gradarg.SparseHessian(_band())(f, x).to_dense()
    torch.testing.assert_close(got, reference(x), rtol=1e-12, atol=1e-12)


def test_a_backward_through_numpy_is_refused_not_zero():
    """Its second derivative exists nowhere torch can see: a second backward pass would give
    0, torch's forward mode through the backward raises, and so does the Hessian."""
    with pytest.raises(RuntimeError):
        gradarg.SparseHessian(_band())(lambda u: NumpyCube.apply(u).sum() + u.sum(), _x())


def test_the_custom_function_walk_finds_one_deep_in_the_graph():
    from gradarg.sparse.passes import has_custom_function

    x = _x().requires_grad_()
    assert not has_custom_function(torch.sin(x).exp().sum())
    assert has_custom_function((torch.sin(OnceCube.apply(x)) * 2).exp().sum())
    assert not has_custom_function(torch.zeros(2))  # no graph at all


def test_float32_input_gives_float32_results():
    x = _x().float()
    J = gradarg.SparseJacobian(_band(), method="forward")(stencil, x).to_dense()
    assert J.dtype == torch.float32
    np.testing.assert_allclose(J.numpy(), torch.func.jacfwd(stencil)(x).numpy(), rtol=1e-5,
                               atol=1e-5)
