"""why_no_grad when the backward pass itself raises, and when the zeros only pass through a join.

Two invariants, each over generated graphs:

- *The diagnosis never raises on a graph torch built, and when torch's own backward raises, the
  answer says so*: case ``"backward-raises"``, with the message torch gives the user's
  ``backward()`` quoted, and the operation or the custom Function concerned named.  (Found by a
  random sweep: a ``torch.heaviside`` on the path made ``why_no_grad`` itself raise torch's
  "derivative for aten::heaviside is not implemented".)
- *The node named as where the cotangent became zero makes zeros; a join only passes them on*:
  ``torch.cat`` / ``torch.stack`` cut the cotangent into their inputs' parts, so when the part
  of one input is all zero, the zeros were made above the join (a ``max`` that picked entries
  of the other input), and that node is named, not the join.
"""

from __future__ import annotations

import warnings

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from gradarg import why_no_grad

PRE = {  # differentiable steps before the failing one
    "scale": lambda t: t * 1.5,
    "tanh": torch.tanh,
    "square": lambda t: t * t,
    "shift": lambda t: t + 0.25,
}


class WrongShape(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return torch.cat([g, g])  # twice the input's size (n = 1 sums back: no error)


class TooMany(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g, g  # forward takes one input


class Raises(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        raise ValueError("this backward is not written yet")


FAILING = {  # (step, what the answer must name)
    "heaviside": (lambda t: torch.heaviside(t, torch.tensor(0.5)), "heaviside"),
    "wrong-shape": (WrongShape.apply, "WrongShapeBackward"),
    "too-many": (TooMany.apply, "TooManyBackward"),
    "raises": (Raises.apply, "RaisesBackward"),
}


def _torch_says(loss: torch.Tensor) -> str:
    """The first line of what the user's own backward() raises (the graph is kept)."""
    with pytest.raises(Exception) as info:  # noqa: PT011  (any type torch passes through)
        loss.backward(retain_graph=True)
    return str(info.value).strip().splitlines()[0]


@given(n=st.integers(2, 4), before=st.lists(st.sampled_from(sorted(PRE)), max_size=3),
       after=st.lists(st.sampled_from(sorted(PRE)), max_size=2),
       kind=st.sampled_from(sorted(FAILING)))
def test_a_backward_that_raises_is_the_answer(n, before, after, kind):
    x = torch.randn(n, requires_grad=True)
    t = x
    for name in before:
        t = PRE[name](t)
    step, named = FAILING[kind]
    t = step(t)
    for name in after:
        t = PRE[name](t)
    loss = t.sum()
    said = _torch_says(loss)
    assert x.grad is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        d = why_no_grad(loss, x, names={"x": x, "loss": loss})
    assert d.case == "backward-raises", d.message
    assert said in d.message, (said, d.message)
    assert named in d.message, d.message
    assert x.grad is None  # the diagnosis left no gradient behind


def test_a_tensor_beside_the_failing_step_is_judged_as_usual():
    """Only a pass that goes through the failing node raises: a tensor reached around it gets
    its ordinary answer."""
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    loss = torch.heaviside(x, torch.tensor(0.5)).sum() + (w * 2).sum()
    assert why_no_grad(loss, w).case == "not-run"
    assert why_no_grad(loss, x).case == "backward-raises"


GATES = {  # a step above the join that gives the first input's part no gradient
    "max": lambda j: j.reshape(2, -1).max(0).values,
    "relu": lambda j: torch.relu(j - 50.0),
    "where": lambda j: torch.where(j > 50.0, j, torch.zeros_like(j)),
}


@given(n=st.integers(1, 5), join=st.sampled_from(["cat", "stack"]),
       gate=st.sampled_from(sorted(GATES)), pre=st.sampled_from(sorted(PRE)))
def test_the_zeros_are_placed_where_they_were_made_not_at_the_join(n, join, gate, pre):
    x = torch.rand(n, requires_grad=True)  # in [0, 1): far below the other part's 100
    h = PRE[pre](x)
    big = torch.full((n,), 100.0)
    j = torch.cat([h, big]) if join == "cat" else torch.stack([h, big]).reshape(-1)
    out = (GATES[gate](j) * torch.arange(1.0, 1.0 + GATES[gate](j).numel())).sum()
    g = torch.autograd.grad(out, x, retain_graph=True)[0]
    assert bool((g == 0).all())  # the truth, by torch alone
    d = why_no_grad(out, x, names={"x": x})
    assert d.case == "zero", d.message
    node = {"max": "MaxBackward", "relu": "ReluBackward", "where": "WhereBackward"}[gate]
    assert f"became zero at {gate}" in d.message or node in d.message, d.message
    assert "CatBackward" not in d.message and "StackBackward" not in d.message, d.message


@given(n=st.integers(1, 4), pre=st.sampled_from(sorted(PRE)),
       dtype=st.sampled_from([torch.complex64, torch.complex128]))
def test_a_complex_output_without_gradient_raises_and_is_said_to(n, pre, dtype):
    """backward() on a complex output without gradient= raises (torch's message, checked
    here); the answer says so rather than taking a gradient of ones that torch never would."""
    x = torch.randn(n, requires_grad=True)
    out = (PRE[pre](x) * torch.tensor(1j, dtype=dtype)).sum()
    said = _torch_says(out)
    assert "real scalar outputs" in said
    d = why_no_grad(out, x, names={"x": x})
    assert d.case == "backward-raises", d.message
    assert "grad can be implicitly created only for real scalar outputs" in d.message
    g = torch.ones((), dtype=out.dtype)
    assert why_no_grad(out, x, gradient=g).case != "backward-raises"  # given: judged as usual


@given(n=st.integers(2, 5), pre=st.sampled_from(sorted(PRE)))
def test_a_non_scalar_output_says_which_gradient_the_answer_took(n, pre):
    """A plain backward() of a non-scalar output raises; the answer, which takes ones, says
    so and names the equivalent call; with gradient= given it says nothing of it."""
    x = torch.randn(n, requires_grad=True)
    out = PRE[pre](x) + 0.0
    assert "only for scalar outputs" in _torch_says(out)
    d = why_no_grad(out, x, names={"x": x})
    assert "only for scalar outputs" in d.message, d.message
    assert "torch.ones_like" in d.message, d.message
    d = why_no_grad(out, x, gradient=torch.ones_like(out), names={"x": x})
    assert "only for scalar outputs" not in d.message, d.message
