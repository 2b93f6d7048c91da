"""check_backward: inputs and outputs, references, probes, determinism, modules, rendering."""

from __future__ import annotations

import pytest
import torch
from backward_corpus import Square as RightSquare
from backward_corpus import SquareMissingFactor as Square  # backward forgets the 2

import gradarg

F64 = torch.float64


class SquareWithJvp(torch.autograd.Function):
    """New style with a correct forward-mode formula, so forward mode is the reference."""

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
        return g * x  # wrong

    @staticmethod
    def jvp(ctx, t):
        (x,) = ctx.saved_tensors
        return 2 * x * t


def test_result_is_falsy_when_wrong_and_names_the_worst_entry():
    x = torch.tensor([1.0, -2.0, 3.0], dtype=F64, requires_grad=True)
    r = gradarg.check_backward(Square.apply, x)
    assert not r and r.status == "wrong"
    (p,) = r.pairs
    assert (p.output, p.input, p.pattern) == ("y", "x", "factor")
    assert "1/2 × ∂y/∂x" in p.sentence
    worst = p.worst[0]  # |2x - x| is largest at x = 3
    assert (worst.output_index, worst.input_index) == ((2,), (2,))
    assert worst.expected == pytest.approx(6.0, rel=1e-9) and worst.got == 3.0
    ex = r.example
    assert ex.output == "y" and ex.index == (2,)
    assert torch.equal(ex.v, torch.tensor([0.0, 0.0, 1.0], dtype=F64))
    torch.testing.assert_close(ex.got["x"], torch.tensor([0.0, 0.0, 3.0], dtype=F64))
    torch.testing.assert_close(ex.expected["x"], torch.tensor([0.0, 0.0, 6.0], dtype=F64))
    # what the example says is what y.backward(gradient=v) really does
    leaf = x.detach().clone().requires_grad_()
    Square.apply(leaf).backward(gradient=ex.v)
    assert torch.equal(leaf.grad, ex.got["x"])


def test_caller_state_is_untouched():
    x = torch.tensor([1.0, -2.0], dtype=F64, requires_grad=True)
    before = x.detach().clone()
    rng = torch.get_rng_state()
    gradarg.check_backward(Square.apply, x)
    assert x.grad is None and torch.equal(x.detach(), before)
    assert torch.equal(torch.get_rng_state(), rng)


def test_forward_mode_is_the_reference_when_the_function_has_a_jvp():
    x = torch.tensor([1.0, -2.0, 0.5], dtype=F64, requires_grad=True)
    r = gradarg.check_backward(SquareWithJvp.apply, x)
    assert r.reference.startswith("forward mode")
    assert not r and r.pairs[0].pattern == "factor"
    fd = gradarg.check_backward(SquareWithJvp.apply, x, reference="finite-difference")
    assert fd.reference.startswith("finite differences (central") and not fd


def test_forward_reference_requested_without_a_jvp_raises():
    x = torch.ones(2, dtype=F64, requires_grad=True)
    with pytest.raises(ValueError, match="does not support forward mode"):
        gradarg.check_backward(Square.apply, x, reference="forward")


def test_float32_function_is_differentiated_on_float64_copies():
    x = torch.linspace(-1, 1, 5, requires_grad=True)
    r = gradarg.check_backward(Square.apply, x)
    assert "float64 copies" in r.reference and not r
    assert r.rtol == gradarg.backward_rtol(torch.float32)


def test_float32_weight_captured_falls_back_to_float32_differences():
    w = torch.randn(3, 3)

    def f(x):
        return torch.tanh(x @ w)

    x = torch.randn(2, 3, requires_grad=True)
    r = gradarg.check_backward(f, x, reference="finite-difference")
    assert r, str(r)
    assert "in torch.float32" in r.reference
    assert any("failed on float64 copies" in n for n in r.notes)


def test_non_grad_and_integer_inputs_are_skipped_and_reported():
    def f(x, idx, scale):
        return x[idx] * scale

    x = torch.randn(4, dtype=F64, requires_grad=True)
    r = gradarg.check_backward(f, x, torch.tensor([0, 2]), torch.tensor(2.0, dtype=F64))
    assert r and r.inputs == ("x",)
    assert any(s.startswith("idx (torch.int64)") for s in r.skipped)
    assert any(s.startswith("scale: does not require grad") for s in r.skipped)
    assert "skipped: idx" in str(r)


def test_nothing_requires_grad_raises():
    with pytest.raises(ValueError, match="requires_grad_"):
        gradarg.check_backward(torch.sin, torch.ones(2))


class NoisyBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return 2 * x

    @staticmethod
    def backward(ctx, g):
        return 2 * g + 1e-3 * torch.randn_like(g)


def test_non_deterministic_backward_is_reported_as_such():
    x = torch.ones(4, dtype=F64, requires_grad=True)
    r = gradarg.check_backward(NoisyBackward.apply, x)
    assert r.status == "non-deterministic" and not r
    assert r.summary.startswith("NON-DETERMINISTIC") and "WRONG" not in str(r)
    assert r.pairs == ()


class AtomicOrder(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, x):
        ctx.save_for_backward(a)
        return a @ x

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        terms = a.T * g
        return None, terms[:, torch.randperm(terms.shape[1])].sum(1)


def test_rounding_level_non_determinism_is_noted_not_fatal():
    g = torch.Generator().manual_seed(3)
    a = torch.randn(64, 64, dtype=F64, generator=g)
    x = torch.randn(64, dtype=F64, generator=g, requires_grad=True)
    r = gradarg.check_backward(AtomicOrder.apply, a, x)
    assert r.status == "agree"
    assert any("non-deterministic" in n and "atomic" in n for n in r.notes)


class ScaledLinear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x @ w.T

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g @ w, 0.5 * g.T @ x  # weight gradient off by 1/2


class Layer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(2, 3, dtype=F64))
        self.register_buffer("offset", torch.ones(2, dtype=F64))

    def forward(self, x):
        return ScaledLinear.apply(x, self.weight) + self.offset


def test_module_parameters_are_inputs():
    layer = Layer()
    x = torch.randn(4, 3, dtype=F64, requires_grad=True)
    r = gradarg.check_backward(layer, x)
    assert r.inputs == ("x", "weight")
    bad = {(p.input, p.pattern) for p in r.wrong_pairs}
    assert bad == {("weight", "factor")}
    assert "Only some inputs are wrong: the gradients of x are right" in r.summary
    assert layer.weight.grad is None
    only_x = gradarg.check_backward(layer, x, parameters=False)
    assert only_x and only_x.inputs == ("x",)


def test_float32_module_runs_its_differences_on_float64_copies():
    torch.manual_seed(0)
    layer = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.LayerNorm(4))
    x = torch.randn(5, 3, requires_grad=True)
    r = gradarg.check_backward(layer, x, reference="finite-difference")
    assert r, str(r)
    assert "float64 copies" in r.reference
    assert len(r.inputs) == 1 + 4  # x, Linear weight and bias, LayerNorm weight and bias
    assert next(layer.parameters()).dtype == torch.float32


def test_large_input_right_backward_runs_only_the_probes():
    x = torch.randn(300, dtype=F64, requires_grad=True)  # 90,000 Jacobian entries
    r = gradarg.check_backward(RightSquare.apply, x)
    assert r and r.pairs == () and len(r.probes) == 3


def test_large_input_wrong_backward_is_localised_after_the_probes():
    x = torch.randn(300, dtype=F64, requires_grad=True)
    r = gradarg.check_backward(Square.apply, x)
    assert not r and r.pairs[0].pattern == "factor"
    assert not any(p.agree for p in r.probes)
    quick = gradarg.check_backward(Square.apply, x, localize=False)
    assert not quick and quick.pairs == () and "localize=" in quick.summary


def test_works_under_no_grad():
    x = torch.tensor([1.0, 2.0], dtype=F64, requires_grad=True)
    with torch.no_grad():
        r = gradarg.check_backward(Square.apply, x)
    assert not r and r.pairs[0].pattern == "factor"


def test_text_and_html():
    x = torch.tensor([1.0, -2.0, 3.0], dtype=F64, requires_grad=True)
    r = gradarg.check_backward(Square.apply, x)
    text = str(r)
    assert text.splitlines()[0] == r.summary
    assert "largest errors:" in text and "y.backward(gradient=v)" in text
    assert all(len(line) <= 78 for line in text.splitlines())
    page = r._repr_html_()
    assert page.count("<table") == 2 and "y.backward(gradient=v)" in page


def test_heatmap_in_html_and_figure():
    pytest.importorskip("matplotlib")
    import matplotlib.figure

    x = torch.tensor([1.0, -2.0, 3.0], dtype=F64, requires_grad=True)
    r = gradarg.check_backward(Square.apply, x)
    assert "data:image/png;base64," in r._repr_html_()
    fig = r.figure()
    assert isinstance(fig, matplotlib.figure.Figure) and fig.get_facecolor()[:3] == (1, 1, 1)
    ok = gradarg.check_backward(torch.sin, x)
    assert ok and "<img" not in ok._repr_html_()
    with pytest.raises(ValueError, match="localize=True"):
        gradarg.check_backward(RightSquare.apply, torch.randn(300, requires_grad=True)).figure()


def test_plain_torch_function_with_two_outputs_agrees():
    def f(x, w):
        return torch.sin(x) * w, (x * w).sum()

    x = torch.randn(3, dtype=F64, requires_grad=True)
    w = torch.randn(3, dtype=F64, requires_grad=True)
    r = gradarg.check_backward(f, x, w)
    assert r and r.reference.startswith("forward mode")
    assert r.outputs == ("y[0]", "y[1]") and len(r.pairs) == 4


def test_bad_reference_name_raises():
    with pytest.raises(ValueError, match="reference must be"):
        gradarg.check_backward(Square.apply, torch.ones(1, requires_grad=True), reference="fd")


def test_integer_outputs_and_complex_inputs_are_skipped_and_reported():
    def f(x, z):
        return torch.sin(x) * z.real, torch.argmax(x)

    x = torch.randn(4, dtype=F64, requires_grad=True)
    z = torch.randn(4, dtype=torch.complex128)
    r = gradarg.check_backward(f, x, z)
    assert r and r.outputs == ("y[0]",)
    assert "y[1] (torch.int64): not a floating output" in r.skipped
    assert any(s.startswith("z (torch.complex128)") for s in r.skipped)


def test_zero_dim_input_and_bfloat16():
    assert gradarg.check_backward(torch.sin, torch.tensor(0.7, dtype=F64, requires_grad=True))
    xb = torch.randn(5, dtype=torch.bfloat16, requires_grad=True)
    r = gradarg.check_backward(torch.tanh, xb, reference="finite-difference")
    assert r and r.rtol == gradarg.backward_rtol(torch.bfloat16) == 1.6e-2


def test_dropout_draws_the_same_mask_for_backward_and_reference():
    x = torch.linspace(0.5, 2.0, 8, dtype=F64, requires_grad=True)
    rng = torch.get_rng_state()
    r = gradarg.check_backward(lambda t: torch.nn.functional.dropout(t, 0.5) * t, x,
                               reference="finite-difference")
    assert r and not r.notes, str(r)
    assert torch.equal(torch.get_rng_state(), rng)
