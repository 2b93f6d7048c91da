"""The one-hot basis that the autodiff routes keep between calls (an identity matrix per size)
must never show: results do not share memory with it or with each other, a backward that
writes into its grad_output does not change later results, and the cache stays small."""

from __future__ import annotations

import pytest
import torch

import gradarg
from gradarg.core import basis

F64 = torch.float64
X = torch.tensor([0.5, -1.0, 2.0, 3.0], dtype=F64)


class ScalesItsGradOutput(torch.autograd.Function):
    """y = 2x, with a backward that doubles grad_output in place (legal, if rude)."""

    @staticmethod
    def forward(x):
        return 2 * x

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, g):
        return g.mul_(2)


ROUTES = [("reverse", None), ("reverse", False), ("forward", None), ("forward", False)]


@pytest.mark.parametrize(("method", "vectorize"), ROUTES)
def test_results_do_not_share_memory_with_each_other(method, vectorize):
    # clone's backward and JVP pass the one-hot vectors through unchanged
    first = gradarg.jacobian(torch.clone, X, method=method, vectorize=vectorize)
    second = gradarg.jacobian(torch.clone, X, method=method, vectorize=vectorize)
    first.add_(1)
    torch.testing.assert_close(second, torch.eye(4, dtype=F64), rtol=0, atol=0)
    third = gradarg.jacobian(lambda t: t.reshape(2, 2), X, method=method, vectorize=vectorize)
    torch.testing.assert_close(third.reshape(4, 4), torch.eye(4, dtype=F64), rtol=0, atol=0)


@pytest.mark.parametrize("vectorize", [None, False])
def test_backward_writing_into_grad_output_does_not_change_later_results(vectorize):
    gradarg.jacobian(ScalesItsGradOutput.apply, X, method="reverse", vectorize=vectorize)
    got = gradarg.jacobian(lambda t: 3 * t, X, method="reverse", vectorize=vectorize)
    torch.testing.assert_close(got, 3 * torch.eye(4, dtype=F64), rtol=0, atol=0)


def test_tuple_inputs_share_one_cached_identity():
    a, b = X, torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=F64)
    got = gradarg.jacobian(lambda p, q: torch.cat([p, q.reshape(-1)]), (a, b), method="forward")
    eye = torch.eye(8, dtype=F64)
    torch.testing.assert_close(got[0], eye[:, :4], rtol=0, atol=0)
    torch.testing.assert_close(got[1], eye[:, 4:].reshape(8, 2, 2), rtol=0, atol=0)


def test_cache_is_bounded():
    basis.clear_basis_cache()
    for n in (3, 4, 5, 6):
        gradarg.jacobian(torch.sin, torch.ones(n, dtype=F64), method="reverse")
    assert len(basis._BASIS) <= basis._BASIS_ENTRIES
    big = int((basis._BASIS_MAX_BYTES / 8) ** 0.5) + 1  # one more row than the cap allows
    basis.eye_blocks([torch.Size([big])], [torch.ones(1, dtype=F64)], cached=True)
    assert all(k[0][0] != big for k in basis._BASIS)
    basis.clear_basis_cache()
    assert not basis._BASIS


def test_inference_mode_basis_is_not_cached():
    basis.clear_basis_cache()
    with torch.inference_mode():
        basis.eye_blocks([torch.Size([7])], [torch.ones(1, dtype=F64)], cached=True)
    assert not basis._BASIS


def test_single_output_basis_is_a_shaped_identity_not_a_view():
    basis.clear_basis_cache()
    (block,) = basis.eye_blocks([torch.Size([2, 3])], [torch.ones(1, dtype=F64)], cached=True)
    assert block._base is None  # its own storage: vmap over a view costs more
    torch.testing.assert_close(block.reshape(6, 6), torch.eye(6, dtype=F64), rtol=0, atol=0)
    (again,) = basis.eye_blocks([torch.Size([2, 3])], [torch.ones(1, dtype=F64)], cached=True)
    assert again is block
