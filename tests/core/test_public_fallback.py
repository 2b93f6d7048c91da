"""Every Jacobian goes through the public torch.func (vmap, jvp) unless the private functorch
fast path is switched on (GRADARG_PRIVATE_FUNCTORCH=1 or functorch.use_private_functorch).  Both
paths must give the same Jacobians, and the package must keep working when torch's private
pieces move (simulated here by hiding them)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch

import gradarg
from gradarg.core import functorch

W = torch.randn(5, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(3))


def mlp(x):
    return torch.tanh(x @ W.T).softmax(-1)


def two_outputs(a, b):
    return (a.sin() * b.sum(), torch.stack([a.sum(), b.prod()]))


# The private pieces exist in the torch the project pins (2.13); older releases (2.1) lack
# some of them, and there the fast path stays off, which the tests below then cannot compare.
PINNED_TORCH = torch.__version__.startswith("2.13.")


@pytest.fixture
def private_on():
    available = functorch.use_private_functorch(True)
    if not available:
        assert not PINNED_TORCH, "torch 2.13 has the private pieces"
        pytest.skip(f"torch {torch.__version__} lacks the private functorch pieces")
    yield
    functorch.use_private_functorch(False)


@pytest.mark.skipif(
    os.environ.get("GRADARG_PRIVATE_FUNCTORCH") == "1", reason="fast path switched on"
)
def test_public_path_is_the_default():
    assert functorch._PRIVATE is None


def _all_blocks(method):
    x = torch.randn(3, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    a = torch.randn(3, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    b = torch.randn(2, dtype=torch.float64, generator=torch.Generator().manual_seed(4))
    one = gradarg.jacobian(mlp, x, method=method, vectorize=True)
    nested = gradarg.jacobian(two_outputs, (a, b), method=method, vectorize=True)
    return [one, *(block for row in nested for block in row)], x


@pytest.mark.parametrize("method", ["reverse", "forward", "finite-difference"])
def test_private_path_matches_public_path(method, private_on):
    fast, _ = _all_blocks(method)
    functorch.use_private_functorch(False)
    slow, x = _all_blocks(method)
    for f, s in zip(fast, slow, strict=True):
        torch.testing.assert_close(f, s, rtol=1e-12, atol=1e-14)
    reference = torch.autograd.functional.jacobian(mlp, x)
    tol = gradarg.fd_tolerance(torch.float64) if method == "finite-difference" else 1e-10
    torch.testing.assert_close(slow[0], reference, rtol=tol, atol=tol)


@pytest.mark.parametrize("public", [True, False], ids=["public", "private"])
def test_random_draws_are_replayed_on_both_paths(public):
    if not public:
        functorch.use_private_functorch(True)
    try:
        x = torch.randn(8, dtype=torch.float64)
        torch.manual_seed(5)
        rev = gradarg.jacobian(lambda t: torch.nn.functional.dropout(t, 0.5), x, method="reverse")
        torch.manual_seed(5)
        fwd = gradarg.jacobian(lambda t: torch.nn.functional.dropout(t, 0.5), x, method="forward")
    finally:
        functorch.use_private_functorch(False)
    torch.testing.assert_close(rev, fwd)
    assert set(rev.diagonal().tolist()) <= {0.0, 2.0}


def _hide(monkeypatch, how):
    if how == "module gone":  # ImportError
        monkeypatch.setitem(sys.modules, "torch._functorch.vmap", None)
    elif how == "function renamed":  # AttributeError (torch's own modules bound it at import)
        monkeypatch.delattr(torch._C._functorch, "_remove_batch_dim")
    elif how == "meaning changed":  # JVP_NESTING no longer a counter
        import torch._functorch.eager_transforms as eager

        monkeypatch.setattr(eager, "JVP_NESTING", None)


@pytest.mark.parametrize("how", ["module gone", "function renamed", "meaning changed"])
def test_switch_stays_off_when_the_private_pieces_moved(monkeypatch, how):
    _hide(monkeypatch, how)
    assert functorch._load_private_functorch() is None
    try:
        assert functorch.use_private_functorch(True) is False
        if how == "meaning changed":  # torch.func.jvp itself needs the counter back
            monkeypatch.undo()
        x = torch.randn(3, 4, dtype=torch.float64)
        for method in ("reverse", "forward", "auto"):
            got = gradarg.jacobian(mlp, x, method=method)
            torch.testing.assert_close(got, torch.func.jacrev(mlp)(x))
    finally:
        functorch.use_private_functorch(False)


def test_environment_variable_switches_the_fast_path_on():
    code = "from gradarg.core import functorch; print(functorch._PRIVATE is not None)"
    env = {**os.environ, "GRADARG_PRIVATE_FUNCTORCH": "1"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    available = functorch._load_private_functorch() is not None
    assert available or not PINNED_TORCH
    assert out.stdout.strip() == str(available)
