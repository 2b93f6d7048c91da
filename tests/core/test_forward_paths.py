"""The forward route's batched paths: torch's own vectorized forward mode, the double-VJP, and
``torch.func``, each equal to torch's Jacobian on every op of the agreement corpus.

``forward.forward_vectorized`` records ``fn`` once per function and input signature and picks
(``speeds.PLANS``): torch's vectorized forward mode
(``torch.autograd.functional.jacobian(vectorize=True, strategy="forward-mode")``) when every node
of the graph is in ``LEGACY_FAST_BACKWARD``; else the derivative of a VJP with respect to its
cotangent, batched with ``is_grads_batched``, when the recorded backward's nodes are in
``LEGACY_FAST_DOUBLE_BACKWARD`` and no ``autograd.Function`` is in the graph; else
``torch.func`` (vmap over jvp).  ``benchmarks/jacobian.py`` measures the choice.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from test_ops_corpus import AUTODIFF_TOL, FORWARD_OK, assert_blocks_close, reference

import gradarg
from gradarg.core import forward, speeds

F64 = torch.float64


def _package(blocks, o):
    """Route blocks in torch.autograd.functional.jacobian's nesting, for comparison."""
    x = o.inputs()
    out = o.fn(*x) if isinstance(x, tuple) else o.fn(x)
    rows = [tuple(r) if isinstance(x, tuple) else r[0] for r in blocks]
    return tuple(rows) if isinstance(out, tuple) else rows[0]


def _xs(o):
    x = o.inputs()
    return tuple(t.detach().clone() for t in (x if isinstance(x, tuple) else (x,)))


def _real(o):
    return not any(t.is_complex() for t in _xs(o))


REAL = [o for o in FORWARD_OK if _real(o)]


def _plan(o, allow_double=True):
    """The plan forward_vectorized picks for o (recorded once, as it does)."""
    return forward._legacy_forward_plan(o.fn, _xs(o), allow_double)[0]


def test_double_vjp_matches_torch_wherever_it_applies():
    applied = []
    for o in REAL:
        found = forward.forward_by_double_vjp(o.fn, _xs(o))
        if found is not None:
            assert_blocks_close(_package(found[0], o), reference(o), **AUTODIFF_TOL)
            applied.append(o.name)
    assert len(applied) >= 20, applied  # most of the corpus, whatever plan auto would pick


def test_torchs_vectorized_forward_matches_wherever_planned():
    planned = []
    for o in REAL:
        if _plan(o) == "legacy":
            blocks, _ = forward.forward_legacy_batched(o.fn, _xs(o))
            assert_blocks_close(_package(blocks, o), reference(o), **AUTODIFF_TOL)
            planned.append(o.name)
    assert len(planned) >= 5, planned


def test_the_corpus_exercises_every_plan():
    plans = [_plan(o) for o in REAL]
    assert plans.count("legacy") >= 5, plans
    assert plans.count("double") >= 1, plans
    assert plans.count("func") >= 3, plans


def _mlp():
    """Two linear layers with bias and tanh: the double-VJP's case (DOUBLE_VJP_WINS)."""
    g = torch.Generator().manual_seed(1)
    w1, w2 = torch.randn(8, 3, generator=g, dtype=F64), torch.randn(20, 8, generator=g, dtype=F64)
    b1, b2 = torch.randn(8, generator=g, dtype=F64), torch.randn(20, generator=g, dtype=F64)
    return lambda t: F.linear(torch.tanh(F.linear(t, w1, b1)), w2, b2)


_G = torch.Generator().manual_seed(2)
W, B = torch.randn(20, 3, generator=_G, dtype=F64), torch.randn(20, generator=_G, dtype=F64)
W4, B4 = torch.randn(4, 4, generator=_G, dtype=F64), torch.randn(4, generator=_G, dtype=F64)


@pytest.mark.parametrize(
    ("fn", "plan"),
    [(lambda t: t @ W.T, "legacy"), (_mlp(), "double"), (lambda t: W @ t, "legacy"),
     (lambda t: torch.tanh(t @ W.T), "func")],
    ids=["x @ W.T", "tanh MLP with bias", "W @ x (mv: few columns)", "tanh, no bias"],
)
def test_plan_follows_the_graph_and_is_remembered(fn, plan):
    x = torch.linspace(-1, 1, 3, dtype=F64)
    got = gradarg.jacobian(fn, x)  # auto: forward, since 20 outputs > 3 inputs
    torch.testing.assert_close(got, torch.func.jacfwd(fn)(x), **AUTODIFF_TOL)
    assert speeds.PLANS.get(fn, forward.plan_key((x,), True)) == plan


def test_a_matrix_vector_product_takes_the_older_forward_path_only_for_few_columns():
    """MvBackward0's older forward rule is fast at few columns, slow at many
    (speeds.LEGACY_FORWARD_MV_MAX_COLUMNS): the plan switches there, the result does not."""
    g = torch.Generator().manual_seed(0)
    for n, plan in ((speeds.LEGACY_FORWARD_MV_MAX_COLUMNS, "legacy"),
                    (speeds.LEGACY_FORWARD_MV_MAX_COLUMNS + 1, "func")):
        w = torch.randn(4 * n, n, generator=g, dtype=F64)

        def fn(t, w=w):
            return w @ t

        x = torch.randn(n, generator=g, dtype=F64)
        torch.testing.assert_close(gradarg.jacobian(fn, x), w)
        assert speeds.PLANS.get(fn, forward.plan_key((x,), True)) == plan


def test_method_forward_never_differentiates_the_backward(monkeypatch):
    """method="forward" is forward-mode formulas only (check_backward's reference relies on
    it): the double-VJP, which differentiates the backward formulas, is for "auto" only."""
    calls = []
    real = forward._double_vjp_columns
    monkeypatch.setattr(forward, "_double_vjp_columns",
                        lambda *a: calls.append(a) or real(*a))
    fn = _mlp()
    x = torch.linspace(-1, 1, 3, dtype=F64)
    got = gradarg.jacobian(fn, x, method="forward")
    torch.testing.assert_close(got, torch.func.jacfwd(fn)(x), **AUTODIFF_TOL)
    assert not calls
    assert speeds.PLANS.get(fn, forward.plan_key((x,), False)) == "func"
    gradarg.jacobian(fn, x)
    assert len(calls) == 1


class ForwardModeTwice(torch.autograd.Function):
    """y = 2x with a jvp that is right and a backward that is deliberately wrong (3 g)."""

    @staticmethod
    def forward(x):
        return 2 * x

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, g):
        return 3 * g

    @staticmethod
    def jvp(ctx, t):
        return 2 * t


def test_autograd_function_gets_its_forward_mode_formula_not_its_backward():
    x = torch.linspace(-1, 1, 4, dtype=F64)
    fn = lambda t: ForwardModeTwice.apply(t).sin()
    assert forward.forward_by_double_vjp(fn, (x,)) is None
    got = gradarg.jacobian(fn, x, method="forward")
    torch.testing.assert_close(got, torch.diag(2 * torch.cos(2 * x)), **AUTODIFF_TOL)


def test_several_inputs_and_outputs_an_unused_input_and_a_constant_output():
    a, b, c = (torch.linspace(-1, 1, n, dtype=F64) for n in (3, 2, 4))

    def fn(p, q, r):
        return p.sin() * q.sum(), torch.ones(2, dtype=F64), F.linear(p, W, B).tanh()

    got = gradarg.jacobian(fn, (a, b, c))  # auto: 28 outputs > 9 inputs
    want = torch.autograd.functional.jacobian(fn, (a, b, c))
    assert_blocks_close(got, want, **AUTODIFF_TOL)
    assert speeds.PLANS.get(fn, forward.plan_key((a, b, c), True)) == "double"


def test_pass_through_does_not_share_the_cached_basis():
    x = torch.ones(4, dtype=F64)
    def fn(t):  # auto: forward (8 outputs, 4 inputs), double-VJP (tanh); the columns of the
        return t.clone(), F.linear(t, W4, B4).tanh()  # clone: tangents as is

    first, _ = gradarg.jacobian(fn, x)
    assert speeds.PLANS.get(fn, forward.plan_key((x,), True)) == "double"
    first.add_(1)
    second, third = gradarg.jacobian(fn, x)
    torch.testing.assert_close(second, torch.eye(4, dtype=F64), rtol=0, atol=0)
    torch.testing.assert_close(third, torch.func.jacfwd(lambda t: fn(t)[1])(x), **AUTODIFF_TOL)


def test_random_op_gives_the_same_draw_as_reverse_mode():
    x = torch.linspace(0.5, 2, 6, dtype=F64)
    fn = lambda t: torch.nn.functional.dropout(t, 0.5) * 2
    torch.manual_seed(7)
    fwd = gradarg.jacobian(fn, x, method="forward")
    torch.manual_seed(7)
    rev = gradarg.jacobian(fn, x, method="reverse")
    torch.testing.assert_close(fwd, rev, rtol=0, atol=0)
    assert 0 < int((fwd.diagonal() != 0).sum()) < 6


def test_switched_off_everything_goes_through_torch_func(monkeypatch):
    monkeypatch.setattr(speeds, "USE_LEGACY_BATCHED_GRAD", False)
    calls = []
    monkeypatch.setattr(forward, "_legacy_forward_plan", lambda *a: calls.append(a))
    fn = _mlp()
    x = torch.linspace(-1, 1, 3, dtype=F64)
    torch.testing.assert_close(gradarg.jacobian(fn, x, method="forward"),
                               torch.func.jacfwd(fn)(x), **AUTODIFF_TOL)
    assert not calls and not speeds.PLANS.of(fn)


ACTIVATIONS = {
    "tanh": torch.tanh, "relu": torch.relu, "sigmoid": torch.sigmoid,
    "softmax": lambda t: torch.softmax(t, -1), "log_softmax": lambda t: torch.log_softmax(t, -1),
}


@pytest.mark.parametrize("act", ACTIVATIONS.values(), ids=ACTIVATIONS.keys())
@pytest.mark.parametrize("shape", [(3,), (2, 3)], ids=["vector", "batch of 2"])
def test_linear_layers_with_bias_take_the_double_vjp_and_match_jacfwd(act, shape):
    x = torch.linspace(-1, 1, 6, dtype=F64)[: torch.Size(shape).numel()].reshape(shape)
    w2 = torch.linspace(-1, 1, 100, dtype=F64).reshape(20, 5)[:, :5]
    b2 = torch.linspace(0, 1, 20, dtype=F64)

    def fn(t):
        return F.linear(act(F.linear(t, W[:5], B[:5])), w2, b2)

    got = gradarg.jacobian(fn, x)
    torch.testing.assert_close(got, torch.func.jacfwd(fn)(x), **AUTODIFF_TOL)
    assert speeds.PLANS.get(fn, forward.plan_key((x,), True)) == "double"
