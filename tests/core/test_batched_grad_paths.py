"""The reverse route's two public batched backward paths agree on the whole agreement corpus.

``reverse.reverse_vectorized`` computes all rows with ``torch.autograd.grad(...,
is_grads_batched=True)`` when every backward node of the graph is in
``speeds.LEGACY_FAST_BACKWARD`` (and the Jacobian is real, small, without ``create_graph``),
else with ``torch.func.vmap`` over ``torch.autograd.grad``.  Both paths are run on every op of
``tests/core/test_ops_corpus.py``, against ``torch.autograd.functional.jacobian``; the choice itself is
checked by spying on which path ran.
"""

from __future__ import annotations

import pytest
import torch
from test_ops_corpus import AUTODIFF_TOL, CORPUS, assert_blocks_close, ids, reference

import gradarg
from gradarg.core import graph, reverse, speeds

F64 = torch.float64


@pytest.fixture
def legacy_calls(monkeypatch):
    """Count the calls of the is_grads_batched path (still computing through it)."""
    calls = []
    real = reverse._legacy_batched_grad

    def spy(*args):
        calls.append(args)
        return real(*args)

    monkeypatch.setattr(reverse, "_legacy_batched_grad", spy)
    return calls


def _graph_is_listed(o) -> bool:
    x = o.inputs()
    xs = x if isinstance(x, tuple) else (x,)
    leaves = tuple(t.detach().requires_grad_(True) for t in xs)
    out = o.fn(*leaves)
    outs = [y for y in (out if isinstance(out, tuple) else (out,)) if y.requires_grad]
    return graph.graph_names(outs) <= speeds.LEGACY_FAST_BACKWARD


@pytest.mark.parametrize("use_legacy", [True, False], ids=["is_grads_batched", "vmap"])
@pytest.mark.parametrize("o", CORPUS, ids=ids(CORPUS))
def test_both_batched_paths_match_torch(o, use_legacy, monkeypatch, legacy_calls):
    monkeypatch.setattr(speeds, "USE_LEGACY_BATCHED_GRAD", use_legacy)
    # vectorize=None: where torch.func.vmap cannot batch (cdist, or a fallback warning turned
    # into an error by the test settings) the route loops, as users get it
    got = gradarg.jacobian(o.fn, o.inputs(), method="reverse")
    assert_blocks_close(got, reference(o), **AUTODIFF_TOL)
    # one row is one plain backward pass (test_batched_nonfinite.py): no batched path
    assert bool(legacy_calls) == (use_legacy and _graph_is_listed(o) and _rows(o) > 1)


def _rows(o) -> int:
    xs = o.inputs()
    ys = o.fn(*xs) if isinstance(xs, tuple) else o.fn(xs)
    return sum(y.numel() for y in (ys if isinstance(ys, tuple) else (ys,)))


def test_the_corpus_exercises_both_paths():
    listed = [o for o in CORPUS if _graph_is_listed(o)]
    assert 20 <= len(listed) < len(CORPUS) - 20


def test_listed_graph_takes_is_grads_batched(legacy_calls):
    x = torch.linspace(-1, 1, 7, dtype=F64)
    got = gradarg.jacobian(torch.sin, x, method="reverse")
    torch.testing.assert_close(got, torch.diag(torch.cos(x)), rtol=0, atol=1e-15)
    assert len(legacy_calls) == 1


@pytest.mark.parametrize(
    "fn",
    [torch.tanh, lambda t: torch.softmax(t, 0), lambda t: torch.sin(t).tanh()],
    ids=["tanh", "softmax", "sin-then-tanh"],
)
def test_unlisted_node_anywhere_keeps_vmap(fn, legacy_calls):
    x = torch.linspace(-1, 1, 5, dtype=F64)
    got = gradarg.jacobian(fn, x, method="reverse")
    assert_blocks_close(got, torch.autograd.functional.jacobian(fn, x), **AUTODIFF_TOL)
    assert not legacy_calls


def test_create_graph_complex_and_large_keep_vmap(legacy_calls, monkeypatch):
    x = torch.linspace(-1, 1, 5, dtype=F64)
    xg = x.clone().requires_grad_(True)
    g = gradarg.jacobian(lambda s: (s**3).sum(), xg, create_graph=True)
    assert g.requires_grad  # differentiable: the backward ran on torch.func.vmap
    torch.testing.assert_close(g.detach(), 3 * x**2)
    z = torch.tensor([1 + 2j, -0.5j], dtype=torch.complex128)
    got = gradarg.jacobian(lambda t: t * t, z)
    torch.testing.assert_close(got, torch.diag(2 * z).conj())
    monkeypatch.setattr(speeds, "LEGACY_MAX_ROWS", 4)
    got = gradarg.jacobian(torch.sin, x, method="reverse")
    torch.testing.assert_close(got, torch.diag(torch.cos(x)))
    assert not legacy_calls


def test_unused_input_gives_zero_block_on_is_grads_batched(legacy_calls):
    a, b = torch.ones(3, dtype=F64), torch.ones(2, dtype=F64)
    ja, jb = gradarg.jacobian(lambda p, q: p * 2, (a, b), method="reverse")
    torch.testing.assert_close(ja, 2 * torch.eye(3, dtype=F64), rtol=0, atol=0)
    torch.testing.assert_close(jb, torch.zeros(3, 2, dtype=F64), rtol=0, atol=0)
    assert jb.grad_fn is None and jb._base is None
    assert legacy_calls


def test_pass_through_backward_does_not_share_the_cached_basis(legacy_calls):
    x = torch.ones(4, dtype=F64)
    first = gradarg.jacobian(torch.clone, x, method="reverse")
    first.add_(1)
    second = gradarg.jacobian(torch.clone, x, method="reverse")
    torch.testing.assert_close(second, torch.eye(4, dtype=F64), rtol=0, atol=0)
    assert legacy_calls


def test_matrix_vector_product_keeps_vmap(legacy_calls):
    """W @ x with a 1-d x (MvBackward0): torch's older batched rule for mv's backward is
    2-200x slower than vmap (benchmarks/batched_grad_nodes.py), so it stays on vmap;
    x @ W.T (an mm) takes the older path."""
    gen = torch.Generator().manual_seed(3)
    W = torch.randn(6, 5, dtype=F64, generator=gen)
    x = torch.randn(5, dtype=F64, generator=gen)
    torch.testing.assert_close(gradarg.jacobian(lambda t: W @ t, x, method="reverse"), W)
    assert not legacy_calls
    torch.testing.assert_close(gradarg.jacobian(lambda t: t @ W.T, x, method="reverse"), W)
    assert len(legacy_calls) == 1
