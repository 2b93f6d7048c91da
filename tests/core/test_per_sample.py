"""Per-sample Jacobians: jacobian(fn, x, batch_dim=...) and jacobian inside torch.func.vmap."""

from __future__ import annotations

import pytest
import torch

import gradarg

F64 = torch.float64


def net():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.Tanh(),
                               torch.nn.Linear(5, 2)).double()


@pytest.mark.parametrize("method", ["auto", "reverse", "forward"])
def test_jacobian_composes_with_vmap(method):
    f = net()
    xs = torch.randn(6, 3, dtype=F64)
    got = torch.func.vmap(lambda s: gradarg.jacobian(f, s, method=method))(xs)
    torch.testing.assert_close(got, torch.func.vmap(torch.func.jacrev(f))(xs))


@pytest.mark.parametrize("batch_dim", [0, 1, -1])
def test_batch_dim_gives_every_samples_own_jacobian(batch_dim):
    f = net()
    xs = torch.randn(6, 3, dtype=F64)
    x = xs if batch_dim == 0 else xs.T.contiguous()
    got = gradarg.jacobian(f, x, batch_dim=batch_dim)
    assert got.shape == (6, 2, 3)
    # by hand: the block diagonal of the whole batch's Jacobian
    whole = torch.func.jacrev(lambda b: f(b))(xs)  # (6, 2, 6, 3)
    torch.testing.assert_close(got, torch.stack([whole[i, :, i] for i in range(6)]))


def test_batch_dim_refuses_what_it_cannot_do():
    f = net()
    x = torch.randn(4, 3, dtype=F64)
    with pytest.raises(ValueError, match="batch_dim must be a dimension of x"):
        gradarg.jacobian(f, x, batch_dim=2)
    with pytest.raises(TypeError, match="needs one tensor x"):
        gradarg.jacobian(f, (x, x), batch_dim=0)
    with pytest.raises(ValueError, match="cannot be combined"):
        gradarg.jacobian(f, x, batch_dim=0, create_graph=True)
