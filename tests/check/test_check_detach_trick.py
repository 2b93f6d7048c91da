"""check_backward's default reference is the derivative of fn's values, not of fn's graph.

With ``reference="auto"`` the backward is compared with forward mode where ``fn`` supports
it.  Forward mode follows the graph ``fn`` records, as the backward does: a gradient changed
with ``.detach()`` (``g(x) + (f(x) - g(x)).detach()``, whose values are ``f`` and whose
graph differentiates ``g``) or a custom ``jvp`` moves it with the backward, and an "agree"
then compared the graph with itself.  The invariant: "agree" only when the backward is the
derivative of ``fn``'s values; a backward that is (a right backward beside a wrong ``jvp``)
is not called wrong.  Truth: torch's own derivative of the value function alone, computed
without the trick.
"""

from __future__ import annotations

import math

import torch
from hypothesis import given
from hypothesis import strategies as st

from gradarg.check import check_backward

F = torch.nn.functional
VALUES = {  # what fn's values are
    "relu": torch.relu, "round": torch.round, "floor": torch.floor, "sin": torch.sin,
    "square": lambda t: t * t, "tanh": torch.tanh, "hardtanh": lambda t: t.clamp(-1, 1),
}
GRAPHS = {  # what fn's graph differentiates
    "identity": lambda t: t, "leaky": lambda t: F.leaky_relu(t, 0.1), "sin": torch.sin,
    "square": lambda t: t * t, "tanh": torch.tanh, "relu": torch.relu,
}


def _slope(f, x: torch.Tensor) -> torch.Tensor:
    """The derivative of the elementwise ``f`` alone, by torch's autograd (exact away from
    its jumps and kinks; zero where ``f`` is piecewise constant)."""
    t = x.detach().clone().requires_grad_(True)
    (g,) = torch.autograd.grad(f(t).sum(), t, allow_unused=True)
    return torch.zeros_like(t) if g is None else g


@given(value=st.sampled_from(sorted(VALUES)), graph=st.sampled_from(sorted(GRAPHS)),
       x=st.lists(st.tuples(st.integers(-6, 5), st.floats(0.06, 0.44)), min_size=1,
                  max_size=6),
       dtype=st.sampled_from([torch.float64, torch.float32]))
def test_agree_only_on_the_derivative_of_the_values(value, graph, x, dtype):
    x = [k / 2 + offset for k, offset in x]  # 0.06 or more from every multiple of 0.5
    f, g = VALUES[value], GRAPHS[graph]
    xt = torch.tensor(x, dtype=dtype, requires_grad=True)

    def fn(t):
        return g(t) + (f(t) - g(t)).detach()

    # relu, hardtanh: kinks at 0, ±1; floor: jumps at integers; round: at half-integers
    truth, passed = _slope(f, xt).double(), _slope(g, xt).double()
    gap = float((truth - passed).abs().max())
    result = check_backward(fn, xt)
    if gap > 1e-2:
        assert result.status != "agree", (value, graph, x, str(result))
    elif gap == 0.0:
        assert result.status == "agree", (value, graph, x, str(result))
    assert xt.grad is None


class _Cube(torch.autograd.Function):
    """y = x³ with a right backward (3x²·g) and a jvp scaled by ``scale`` (right at 1)."""

    @staticmethod
    def forward(x, scale):
        return x ** 3

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, scale = inputs
        ctx.save_for_backward(x)
        ctx.save_for_forward(x)
        ctx.scale = scale

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * x * x * g, None

    @staticmethod
    def jvp(ctx, u, _):
        (x,) = ctx.saved_tensors
        return ctx.scale * 3 * x * x * u


@given(scale=st.sampled_from([1.0, 0.5, 2.0, -1.0]),
       x=st.lists(st.floats(0.5, 2), min_size=1, max_size=5))
def test_a_right_backward_beside_a_wrong_jvp_agrees(scale, x):
    xt = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    result = check_backward(lambda t: _Cube.apply(t, scale), xt)
    assert result.status == "agree", str(result)
    said = any("forward-mode derivative" in n for n in result.notes)
    assert said == (not math.isclose(scale, 1.0)), result.notes
