"""gradarg batches through torch's functorch internals when they exist (less call overhead) and
through the public torch.func.vmap / torch.func.jvp otherwise (other torch versions). Both paths
must give the same Jacobians."""

from __future__ import annotations

import pytest
import torch

import gradarg
from gradarg import _routes

W = torch.randn(5, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(3))


def mlp(x):
    return torch.tanh(x @ W.T).softmax(-1)


def two_outputs(a, b):
    return (a.sin() * b.sum(), torch.stack([a.sum(), b.prod()]))


@pytest.fixture
def public_only(monkeypatch):
    monkeypatch.setattr(_routes, "_remove_batch_dim", None)
    monkeypatch.setattr(_routes, "_HAVE_RAW_JVP", False)


@pytest.mark.parametrize("method", ["reverse", "forward"])
def test_public_path_matches_internal_path(method, monkeypatch):
    x = torch.randn(3, 4, dtype=torch.float64)
    a, b = torch.randn(3, dtype=torch.float64), torch.randn(2, dtype=torch.float64)
    fast = gradarg.jacobian(mlp, x, method=method, vectorize=True)
    fast_t = gradarg.jacobian(two_outputs, (a, b), method=method, vectorize=True)
    monkeypatch.setattr(_routes, "_remove_batch_dim", None)
    monkeypatch.setattr(_routes, "_HAVE_RAW_JVP", False)
    slow = gradarg.jacobian(mlp, x, method=method, vectorize=True)
    slow_t = gradarg.jacobian(two_outputs, (a, b), method=method, vectorize=True)
    torch.testing.assert_close(fast, slow, rtol=1e-12, atol=1e-14)
    for row_fast, row_slow in zip(fast_t, slow_t, strict=True):
        for block_fast, block_slow in zip(row_fast, row_slow, strict=True):
            torch.testing.assert_close(block_fast, block_slow, rtol=1e-12, atol=1e-14)
    reference = torch.autograd.functional.jacobian(mlp, x)
    torch.testing.assert_close(slow, reference, rtol=1e-10, atol=1e-12)


def test_public_path_still_replays_random_draws(public_only):
    x = torch.randn(8, dtype=torch.float64)
    torch.manual_seed(5)
    rev = gradarg.jacobian(lambda t: torch.nn.functional.dropout(t, 0.5), x, method="reverse")
    torch.manual_seed(5)
    fwd = gradarg.jacobian(lambda t: torch.nn.functional.dropout(t, 0.5), x, method="forward")
    torch.testing.assert_close(rev, fwd)
    assert set(rev.diagonal().tolist()) <= {0.0, 2.0}
