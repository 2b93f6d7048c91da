"""check_backward on wrong backwards of ordinary layer size (bounded localisation), against
an intended backward (expected=), and regions reported only when they hold at fresh points."""

from __future__ import annotations

import pytest
import torch
from layer_cases import (
    GradReverse,
    LayerNormWrongDim,
    LinearForgotBias,
    PassThroughClamp,
    RoundSTE,
    SignSTE,
    layer_norm_inputs,
    linear_inputs,
)

import gradarg
from gradarg.check import budget, fd_error, localize
from gradarg.check import checker as cb

F64 = torch.float64


@pytest.fixture
def no_full_jacobian(monkeypatch):
    """Fail if any whole Jacobian (backward rows or reference columns) is built."""

    def forbidden(*args, **kwargs):
        raise AssertionError("a whole Jacobian was built")

    monkeypatch.setattr(cb, "jacobian", forbidden)
    monkeypatch.setattr(fd_error, "partials", forbidden)


def test_linear_forgot_bias_names_the_pair_without_whole_jacobians(no_full_jacobian):
    x, w, b = linear_inputs()  # x 32×64, w 64×64, b 64: 2048 outputs, 6208 inputs
    r = gradarg.check_backward(LinearForgotBias.apply, x, w, b)
    assert not r and r.status == "wrong"
    assert [(p.output, p.input) for p in r.wrong_pairs] == [("y", "b")]
    (p,) = r.wrong_pairs
    assert p.pattern == "zero"
    # y[i, c] = ... + b[c]: ∂y[i, c]/∂b[c] = 1, and the backward gives 0 for all of them
    assert p.n_wrong == 32 * 64
    assert all(e.expected == pytest.approx(1.0) and e.got == 0 for e in p.worst)
    assert all(e.output_index[1] == e.input_index[0] for e in p.worst)
    # the pairs the probes found right were never expanded
    right = {q.input: q for q in r.pairs if q.agree}
    assert set(right) == {"x", "w"} and all(q.got is None for q in right.values())
    assert p.n_checked == p.n_entries == 2048 * 64  # b is small: every entry compared
    assert "backward passes" in r.full_cost and "GB" in r.full_cost
    ex = r.example
    assert ex.right == {"x": True, "w": True, "b": False}
    c = ex.index[1]
    assert float(ex.got["b"].abs().sum()) == 0 and float(ex.expected["b"][c]) == pytest.approx(1)


def _layer_norm_row(x, index):
    """Row ``index`` of the true Jacobian of the layer norm, by plain torch autograd."""
    leaf = x.detach().clone().requires_grad_()
    xc = leaf - leaf.mean(-1, keepdim=True)
    y = xc / (xc.pow(2).mean(-1, keepdim=True) + 1e-5).sqrt()
    y[index].backward()
    return leaf.grad


def test_layer_norm_wrong_dim_is_localised_on_a_sample(no_full_jacobian):
    (x,) = layer_norm_inputs()  # 32×64: a 2048 × 2048 Jacobian
    r = gradarg.check_backward(LayerNormWrongDim.apply, x)
    assert not r
    (p,) = r.wrong_pairs
    assert (p.output, p.input) == ("y", "x")
    assert p.sampled and p.n_checked <= budget.BLOCK_ENTRIES < p.n_entries == 2048 * 2048
    assert p.columns is not None and p.got.shape == (2048, p.columns.numel())
    assert any("localize='full'" in n for n in r.notes)
    # the worst entries are wrong by an independent computation of the true Jacobian
    for e in p.worst[:3]:
        true = float(_layer_norm_row(x, e.output_index)[e.input_index])
        assert e.expected == pytest.approx(true, abs=1e-6)
        assert abs(e.got - true) > 0.1
    # and the example v shows it: y.backward(gradient=v) differs from the true row
    ex = r.example
    true_row = _layer_norm_row(x, ex.index)
    leaf = x.detach().clone().requires_grad_()
    LayerNormWrongDim.apply(leaf).backward(gradient=ex.v)
    assert torch.equal(leaf.grad, ex.got["x"])
    known = torch.isfinite(ex.expected["x"])
    assert 0 < int(known.sum()) < x.numel()
    torch.testing.assert_close(ex.expected["x"][known], true_row[known], atol=1e-6, rtol=0)
    assert float((ex.got["x"] - true_row).abs().max()) > 0.1


def test_full_localisation_states_its_cost_first(monkeypatch):
    monkeypatch.setattr(cb, "FULL_WARN_BYTES", 1)
    x = torch.randn(20, dtype=F64, requires_grad=True)
    with pytest.warns(cb.LocalizationCostWarning, match="backward passes"):
        r = gradarg.check_backward(RoundSTE.apply, x, localize="full")
    assert r.pairs[0].n_checked == r.pairs[0].n_entries == 400


def test_bounded_and_full_agree_on_a_small_wrong_backward():
    from backward_corpus import SquareMissingFactor

    x = torch.randn(50, dtype=F64, requires_grad=True)
    full = gradarg.check_backward(SquareMissingFactor.apply, x, localize="full")
    bounded = gradarg.check_backward(SquareMissingFactor.apply, x, localize="bounded")
    assert full.pairs[0].pattern == bounded.pairs[0].pattern == "factor"
    assert full.pairs[0].worst[0] == bounded.pairs[0].worst[0]


# ----------------------------------------------------------------- intended backwards


def test_straight_through_round_is_called_not_the_derivative_and_points_at_expected():
    x = torch.linspace(-2, 2, 9, dtype=F64).requires_grad_()
    r = gradarg.check_backward(RoundSTE.apply, x)
    assert not r and r.pairs[0].pattern == "not-derivative"
    assert "straight-through" in r.summary and "expected=" in r.summary
    assert "does not depend on the upstream gradient" not in r.summary
    ok = gradarg.check_backward(RoundSTE.apply, x, expected=lambda g, x: g)
    assert ok and ok.reference.startswith("the intended backward")


def test_sign_with_hardtanh_backward_against_its_intent():
    x = torch.linspace(-1.5, 1.5, 10, dtype=F64).requires_grad_()

    def hardtanh_grad(g, x):
        return g * (x.abs() <= 1)

    assert gradarg.check_backward(SignSTE.apply, x, expected=hardtanh_grad)
    # stated intent "identity", backward clips: wrong exactly where |x| > 1
    r = gradarg.check_backward(SignSTE.apply, x, expected=lambda g, x: g)
    assert not r
    (p,) = r.wrong_pairs
    wrong_cols = {e.input_index[0] for e in p.worst}
    outside = {i for i in range(10) if abs(float(x.detach()[i])) > 1}
    assert wrong_cols == outside and p.n_wrong == len(outside)
    assert p.region is None  # both ends of the range: no single threshold


def test_gradient_reversal_and_pass_through_clamp_against_their_intent():
    x = torch.randn(6, dtype=F64, requires_grad=True)
    r = gradarg.check_backward(GradReverse.apply, x, 0.5)
    assert not r and r.wrong_pairs[0].pattern == "factor" and "expected=" not in r.summary
    assert gradarg.check_backward(GradReverse.apply, x, 0.5,
                                  expected=lambda g, x, scale: (-scale * g, None))
    wrong = gradarg.check_backward(GradReverse.apply, x, 0.5,
                                   expected=lambda g, x, scale: (-g, None))
    assert not wrong and "1/2 × the intended gradient" in wrong.summary

    xc = torch.tensor([-2.0, -0.5, 0.0, 0.5, 2.0, 3.0], dtype=F64, requires_grad=True)
    r = gradarg.check_backward(PassThroughClamp.apply, xc, -1.0, 1.0)
    assert not r and r.wrong_pairs[0].pattern == "not-derivative"
    assert gradarg.check_backward(PassThroughClamp.apply, xc, -1.0, 1.0,
                                  expected=lambda g, x, lo, hi: (g, None, None))


def test_expected_on_a_large_input_is_checked_on_sampled_rows():
    x = torch.randn(40, 100, dtype=F64, requires_grad=True)
    assert gradarg.check_backward(RoundSTE.apply, x, expected=lambda g, x: g)
    r = gradarg.check_backward(RoundSTE.apply, x, expected=lambda g, x: 2 * g)
    assert not r and r.wrong_pairs[0].pattern == "factor"


def test_expected_returning_the_wrong_shape_or_count_raises():
    x = torch.randn(3, dtype=F64, requires_grad=True)
    with pytest.raises(ValueError, match="shape"):
        gradarg.check_backward(RoundSTE.apply, x, expected=lambda g, x: g[:2])
    with pytest.raises(ValueError, match="one per argument"):
        gradarg.check_backward(GradReverse.apply, x, 1.0, expected=lambda g, x, s: (g, g, g))
    with pytest.raises(TypeError, match="expected must be a function"):
        gradarg.check_backward(RoundSTE.apply, x, expected=1.0)


# ----------------------------------------------------------------- regions


class MaxScatterNextIndex(torch.autograd.Function):
    """``x.max()``; the backward puts the gradient at the index after the maximum too."""

    @staticmethod
    def forward(ctx, x):
        value, index = x.max(0)
        ctx.save_for_backward(index)
        ctx.n = x.numel()
        return value

    @staticmethod
    def backward(ctx, g):
        (index,) = ctx.saved_tensors
        grad = torch.zeros(ctx.n, dtype=g.dtype)
        grad[(index + 1) % ctx.n] = g  # should be grad[index] = g
        return grad


def test_a_threshold_that_splits_one_sample_by_chance_is_not_reported():
    # the element after the maximum happens to be the second largest: at this x the wrong
    # columns {3, 4} are exactly "the two largest", a split by chance
    x = torch.tensor([0.1, -0.3, 0.5, 2.0, 1.2, -1.0, 0.0, 0.3], dtype=F64,
                     requires_grad=True)
    wrong_cols = torch.zeros(8, dtype=torch.bool)
    wrong_cols[[3, 4]] = True
    assert localize.threshold(wrong_cols, x) is not None
    r = gradarg.check_backward(MaxScatterNextIndex.apply, x)
    (p,) = r.wrong_pairs
    assert p.region is None and "where" not in p.sentence
    assert "x[3]" in p.sentence and "x[4]" in p.sentence


def test_a_real_region_is_still_reported():
    from backward_corpus import LeakyReluWrongNegativeSlope

    x = torch.randn(150, dtype=F64, requires_grad=True)  # bounded: 22,500 entries
    r = gradarg.check_backward(LeakyReluWrongNegativeSlope.apply, x)
    (p,) = r.wrong_pairs
    assert p.region is not None and p.region.startswith("where x < 0")


class OneWrongColumn(torch.autograd.Function):
    """``sin(x)`` elementwise; the backward gets a single element wrong."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sin(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        grad = g * torch.cos(x)
        grad[1234] = 0.5 * grad[1234]
        return grad


def test_a_single_wrong_column_is_found_by_group_tests(no_full_jacobian):
    x = torch.randn(4000, dtype=F64, requires_grad=True)
    r = gradarg.check_backward(OneWrongColumn.apply, x)
    (p,) = r.wrong_pairs
    assert p.columns is not None and p.columns.numel() < 4000
    assert [(e.output_index, e.input_index) for e in p.worst] == [((1234,), (1234,))]


def test_heatmap_of_a_sampled_block():
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    x, w, b = linear_inputs(batch=4, n_in=24, n_out=24)  # 96 × 696: sampled
    r = gradarg.check_backward(LinearForgotBias.apply, x, w, b, localize="bounded")
    fig = r.figure(pairs="wrong")
    assert len([a for a in fig.axes if a.get_title().startswith("∂y/∂b")]) == 1
    plt.close(fig)
    assert "data:image/png;base64," in r._repr_html_()


class NoGradBackward(torch.autograd.Function):
    """``sin``; the backward runs under no_grad and forgets the cosine."""

    @staticmethod
    def forward(ctx, x):
        return torch.sin(x)

    @staticmethod
    @torch.no_grad()
    def backward(ctx, g):
        return 0.5 * g


def test_backwards_that_cannot_be_differentiated_are_localised_from_rows():
    from backward_corpus import OnceDiffMissingFactor

    x = torch.randn(300, dtype=F64, requires_grad=True)  # 90,000 entries: bounded
    for fn in (OnceDiffMissingFactor.apply, NoGradBackward.apply):
        r = gradarg.check_backward(fn, x)
        (p,) = r.wrong_pairs
        assert p.pattern != "zero", str(r)
        e = p.worst[0]
        assert e.output_index == e.input_index and e.got != 0


def test_expected_with_two_outputs_gets_a_tuple_of_upstream_gradients():
    from backward_corpus import SinCos

    x = torch.randn(5, dtype=F64, requires_grad=True)

    def intended(grads, x):
        g1, g2 = grads
        return g1 * torch.cos(x) - g2 * torch.sin(x)

    assert gradarg.check_backward(SinCos.apply, x, expected=intended)
    r = gradarg.check_backward(SinCos.apply, x, expected=lambda gs, x: gs[0] * torch.cos(x))
    assert not r and [(p.output, p.input) for p in r.wrong_pairs] == [("y[1]", "x")]
