"""The cut located by recomputing: over generated forwards (a chain of operations from ``w``,
one cut of a generated kind at a generated place, benign cuts beside it that do not reach the
output: a mask ``h > 0``, a ``zeros_like``, a logged ``.item()``), ``locate`` names the cut
that reaches the output, the function that made it, and for a grad-mode cut the switch that
turned recording off (a ``with`` block, a decorator, a ``set_grad_enabled(False)`` call,
``inference_mode``).  A forward without a cut gets no located cut, and the caller's grad
mode, random state and profiler are as they were, even when the forward raises.
"""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg
from gradarg.trace.why.located import locate


# -- the cuts, one function each (the located cut must name that function) --------------------
def cut_no_grad_block(h):
    with torch.no_grad():
        return h * 2


@torch.no_grad()
def cut_no_grad_decorated(h):
    return h * 2


def cut_set_grad_enabled_call(h):
    torch.set_grad_enabled(False)
    try:
        return h * 2
    finally:
        torch.set_grad_enabled(True)


def cut_inference_mode(h):
    with torch.inference_mode():
        out = h * 2
    return out.clone()


def cut_detach(h):
    return h.detach() * 2


def cut_data(h):
    return h.data * 2


def cut_tensor_copy(h):
    # the losses' stack written torch.tensor([...]) of 0-dim tensors; torch warns about it
    # once per process (which test sees the warning depends on the order the tests run in)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Converting a tensor with requires_grad")
        return torch.tensor([v for v in h.flatten()]) * 2


def cut_argmax(h):
    return nn.functional.one_hot(h.argmax(), h.numel()).to(h.dtype)


def cut_numpy(h):
    return torch.from_numpy(h.detach().numpy() * 2)


# kind -> (function, what the located cut says: call, reason words, switch kind or None)
CUTS = {
    "no_grad": (cut_no_grad_block, "Tensor.mul", "grad mode off", "no_grad"),
    "decorator": (cut_no_grad_decorated, "Tensor.mul", "grad mode off", "no_grad"),
    "set_grad_enabled": (cut_set_grad_enabled_call, "Tensor.mul", "grad mode off",
                         "set_grad_enabled(False)"),
    "inference_mode": (cut_inference_mode, "Tensor.mul", "inference mode", "inference_mode"),
    "detach": (cut_detach, "Tensor.detach", "cut from the graph", None),
    "data": (cut_data, "Tensor.data", "cut from the graph", None),
    "tensor_copy": (cut_tensor_copy, "torch.tensor", "new tensor without history", None),
    "argmax": (cut_argmax, "Tensor.argmax", "int64 values", None),
}
SMOOTH = [torch.sin, torch.tanh, lambda h: h * 3 + 1, lambda h: h.exp() / 4]


def benign(h, which: int):
    """A cut beside the path that does not reach the output."""
    if which == 0:
        return h * (h > 0)  # a mask: the bool is a cut, the product keeps the graph
    if which == 1:
        return h + torch.zeros_like(h)
    if which == 2:
        float(h.sum().item())  # a logged value
        return h
    return h


def forward(w, kind, before, after, extra):
    h = w
    for i in before:
        h = SMOOTH[i](h)
    h = benign(h, extra)
    if kind is not None:
        h = CUTS[kind][0](h)
    for i in after:
        h = SMOOTH[i](h)
    return h.sum()


def _state():
    return torch.is_grad_enabled(), torch.get_rng_state(), sys.getprofile()


@settings(max_examples=60, deadline=None)
@given(kind=st.sampled_from(sorted(CUTS)), before=st.lists(st.integers(0, 3), max_size=3),
       after=st.lists(st.integers(0, 3), max_size=3), extra=st.integers(0, 3),
       n=st.integers(2, 5))
def test_the_cut_that_reaches_the_output_is_named_with_its_function(kind, before, after,
                                                                     extra, n):
    w = torch.linspace(0.1, 0.9, n, dtype=torch.float64).requires_grad_()
    fn, call, words, switch = CUTS[kind]
    was = _state()
    found = locate(lambda: forward(w, kind, before, after, extra), w)
    grad, rng, prof = _state()
    assert grad == was[0] and torch.equal(rng, was[1]) and prof is was[2]
    assert found is not None and found.cuts, kind
    cut = found.cuts[0]
    assert cut.call == call
    assert words in cut.reason()
    # the line is the cut's own function (a decorator's: the function decorated)
    assert cut.where is not None and cut.where.function == fn.__name__
    if switch is None:
        assert cut.grad_enabled and not cut.inference
    else:
        assert cut.switch is not None and cut.switch.kind == switch and cut.switch.off
        if kind == "decorator":
            assert cut.switch.decorates == fn.__qualname__
        else:
            assert cut.switch.where is not None and cut.switch.where.function == fn.__name__
    said = found.sentence("w", "loss")
    assert said is not None and call in said and fn.__name__ in said


@settings(max_examples=40, deadline=None)
@given(before=st.lists(st.integers(0, 3), max_size=4), extra=st.integers(0, 3))
def test_a_forward_without_a_cut_gets_none(before, extra):
    w = torch.linspace(0.1, 0.9, 4, dtype=torch.float64).requires_grad_()
    found = locate(lambda: forward(w, None, before, [], extra), w)
    assert found is not None and found.reached
    assert found.cuts == () and found.exits == () and found.sentence("w", "loss") is None


def test_values_that_left_torch_are_followed_to_the_exit():
    w = torch.linspace(0.1, 0.9, 4, dtype=torch.float64).requires_grad_()
    found = locate(lambda: cut_numpy(w * 3).sum(), w)
    said = found.sentence("w", "loss")
    assert found.cuts == () and said is not None
    assert "Tensor.detach" in said and "Tensor.numpy" in said and "cut_numpy" in said


def test_a_forward_that_raises_leaves_the_caller_as_it_was():
    w = torch.ones(3, requires_grad=True)

    def broken():
        with torch.no_grad():
            raise RuntimeError("inside")

    was = _state()
    assert locate(broken, w) is None
    grad, rng, prof = _state()
    assert grad == was[0] and torch.equal(rng, was[1]) and prof is was[2]


def test_grad_mode_already_off_is_said_so():
    w = torch.ones(3, requires_grad=True)
    with torch.no_grad():
        found = locate(lambda: (w * 2).sum(), w)
    assert found.cuts and found.cuts[0].switch is None
    assert "already off when the function was called" in found.cuts[0].reason()


@pytest.mark.parametrize("kind", sorted(CUTS))
def test_why_no_grad_names_the_located_cut(kind):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    x = torch.randn(5, 3)
    fn = CUTS[kind][0]

    def loss():
        return fn(model[0](x)).sum() + 0 * model[2].weight.sum()

    d = gradarg.why_no_grad(loss, model[0].weight, module=model)
    assert d.case in ("output-no-grad", "unused-parameter", "not-reachable"), d
    assert fn.__name__ in d.message and CUTS[kind][1] in d.message, d.message
    # a tensor (not a function) cannot be run again: no located cut
    d_tensor = gradarg.why_no_grad(loss(), model[0].weight, module=model)
    assert "running the function again" not in d_tensor.message


def test_a_module_run_under_set_grad_enabled_false_is_located_in_its_forward():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.Linear(3, 3), nn.Linear(3, 1)

        def forward(self, x):
            with torch.set_grad_enabled(False):
                h = self.a(x)
            return self.b(h)

    net, x = Net(), torch.randn(4, 3)
    d = gradarg.why_no_grad(lambda: net(x).sum(), net.a.weight, module=net)
    assert d.case == "unused-parameter"
    assert "F.linear" in d.message and "forward" in d.message
    assert "set_grad_enabled(False)" in d.message
    assert "its forward was not called" not in d.message  # it was: the cut is known


def test_numpy_is_available_for_the_exit_test():
    assert np.ones(1).sum() == 1.0


def test_a_mask_that_enters_the_cut_is_not_named_before_it():
    w = torch.linspace(-0.5, 0.9, 5, dtype=torch.float64).requires_grad_()

    def masked():
        h = w * 2
        mask = h > 0
        with torch.no_grad():
            z = h * mask
        return z.sum()

    found = locate(masked, w)
    assert [c.call for c in found.cuts] == ["Tensor.mul", "Tensor.gt"]
    assert not found.cuts[0].grad_enabled and found.cuts[0].switch.kind == "no_grad"


def test_a_switch_that_ended_is_not_named():
    w = torch.ones(3, requires_grad=True)

    def logged_then_cut():
        with torch.no_grad():
            float((w * 3).sum())  # a block for logging, ended
        return (w * 2).sum()  # grad mode is off here because the caller turned it off

    with torch.no_grad():
        found = locate(logged_then_cut, w)
    assert found.cuts[-1].call == "Tensor.mul" and found.cuts[0].switch is None


# -- the line that made the node where NaN/Inf first appears -----------------------------------
def singular_sqrt(h):
    d = h - h.detach()
    return torch.sqrt((d * d).sum(-1, keepdim=True))  # its derivative at 0 is infinite


def singular_acos(h):
    return torch.acos(torch.tanh(h) * 0 + 1)  # at 1: infinite derivative


def singular_norm(h):
    return torch.linalg.norm((h - h.detach()) * 2, dim=-1, keepdim=True) ** 0.5


SINGULAR = {"sqrt": (singular_sqrt, "SqrtBackward0"), "acos": (singular_acos, "AcosBackward0"),
            "pow": (singular_norm, "PowBackward0")}


@settings(max_examples=30, deadline=None)
@given(kind=st.sampled_from(sorted(SINGULAR)), before=st.lists(st.integers(0, 3), max_size=2),
       after=st.lists(st.integers(0, 3), max_size=2), seed=st.integers(0, 20))
def test_the_node_where_nan_first_appears_is_made_at_a_named_line(kind, before, after, seed):
    torch.manual_seed(seed)
    lin, x = nn.Linear(3, 3), torch.randn(5, 3)
    fn, node = SINGULAR[kind]

    def loss():
        h = lin(x)
        for i in before:
            h = SMOOTH[i](h)
        h = fn(h)
        for i in after:
            h = SMOOTH[i](h)
        return h.sum()

    (g,) = torch.autograd.grad(loss(), lin.weight)  # plain torch: the gradient is not finite
    assert not torch.isfinite(g).all()
    d = gradarg.why_no_grad(loss, lin.weight, module=lin)
    assert d.case == "nonfinite"
    if node in d.message:  # the node the diagnosis names is made at the singular line
        assert f"(in {fn.__name__})" in d.message.rsplit("running the function again", 1)[-1]
    assert "running the function again located the forward call that made" in d.message, d


def test_a_tensor_output_gets_no_line():
    w = torch.zeros(3, requires_grad=True)
    d = gradarg.why_no_grad(torch.sqrt(w).sum(), w)
    assert d.case == "nonfinite" and "running the function again" not in d.message
