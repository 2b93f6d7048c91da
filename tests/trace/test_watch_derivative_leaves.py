"""Class: a loss built from derivatives taken with ``torch.autograd.grad(..., create_graph=True)``
(a Hamiltonian network's time derivatives, a physics-informed residual) gives no gradient to a
parameter those derivatives do not depend on (the last layer's bias of an energy network); asked
why, the watch names the derivative whose graph does not reach it.  A bias followed by a
nonlinearity is reached (it gets a gradient); a parameter cut by ``detach()`` in a step with no
such derivative gets the general answer.

The truth comes from torch alone: which ``.grad`` is None, and whether the derivative's graph
reaches the parameter (``torch.autograd.grad(..., allow_unused=True)`` of the derivative).
Generated: widths, depth, the activation, whether the output has a last nonlinearity.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg

SAID = "has a graph that does not reach"


def _energy(width: int, depth: int, act: type[nn.Module], squash: bool) -> nn.Sequential:
    layers: list[nn.Module] = [nn.Linear(2, width), act()]
    for _ in range(depth - 1):
        layers += [nn.Linear(width, width), act()]
    layers.append(nn.Linear(width, 1))
    if squash:  # a nonlinearity after the last bias: the derivatives depend on it
        layers.append(nn.Softplus())
    return nn.Sequential(*layers)


@settings(max_examples=15, deadline=None)
@given(width=st.integers(2, 10), depth=st.integers(1, 3),
       act=st.sampled_from([nn.Tanh, nn.Softplus, nn.ELU]), squash=st.booleans(),
       seed=st.integers(0, 2**16))
def test_a_parameter_no_derivative_depends_on_is_named(width, depth, act, squash, seed):
    torch.manual_seed(seed)
    model = _energy(width, depth, act, squash)
    last = f"{2 * depth}.bias"
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
    x, target = torch.randn(16, 2, requires_grad=True), torch.randn(16, 2)
    with gradarg.watch(model) as w:
        opt.zero_grad()
        d, = torch.autograd.grad(model(x).sum(), x, create_graph=True)
        loss = ((torch.stack([d[:, 1], -d[:, 0]], 1) - target) ** 2).mean()
        # the truth, from torch: does the derivative depend on the last bias?
        bias = dict(model.named_parameters())[last]
        reached = torch.autograd.grad(d.sum(), bias, retain_graph=True, allow_unused=True)[0]
        loss.backward()
        opt.step()
    assert (bias.grad is None) == (reached is None) == (not squash)
    why = w.why_no_grad(last)
    assert (SAID in why) == (not squash), why


def test_a_cut_without_a_derivative_gets_the_general_answer():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 1))
    with gradarg.watch(model) as w:
        h = model[1](model[0](torch.randn(8, 2))).detach()  # the first layer cut
        (model[2](h) ** 2).mean().backward()
    assert model[0].weight.grad is None
    why = w.why_no_grad("0.weight")
    assert SAID not in why and "no gradient reached 0.weight" in why, why
