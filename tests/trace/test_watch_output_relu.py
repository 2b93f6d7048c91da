"""Class: a ``relu`` applied to the model's last layer output inside the loss (an evidential
classifier's ``alpha = relu(logits) + 1``, a rate made with ``relu``) gives an exactly zero
gradient to every output below 0, so those outputs never rise back.  The watch names it when a
quarter of the entries or more are cut; ``softplus`` or ``exp`` in its place, or a hinge
``relu(1 - y f)`` (whose zero gradient past the margin is meant), are not named.

The truth comes from torch alone: ``torch.autograd.grad`` of the loss with respect to the
model's output, and the share of its entries that are exactly zero.  Generated: the positive
map, the last layer's bias shift (how many outputs are below 0), a hidden ReLU layer or Tanh,
the seed.
"""

from __future__ import annotations

import re

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg


def _loss(out, y, how):
    if how == "hinge":  # a multi-class hinge: zero gradient past the margin is meant
        sign = 2 * F.one_hot(y, 4) - 1
        return torch.relu(1 - sign * out).mean()
    pos = {"relu": torch.relu, "softplus": F.softplus, "exp": torch.exp}[how](out)
    alpha = pos + 1.0
    return (F.one_hot(y, 4) * (alpha.sum(1, keepdim=True).log() - alpha.log())).sum(1).mean()


@settings(max_examples=30, deadline=None)
@given(how=st.sampled_from(["relu", "relu", "softplus", "exp", "hinge"]),
       shift=st.sampled_from([-2.0, 0.0, 2.0]), hidden=st.sampled_from(["relu", "tanh"]),
       seed=st.integers(0, 2**16))
def test_a_relu_of_the_output_in_the_loss_is_named(how, shift, hidden, seed):
    torch.manual_seed(seed)
    act = nn.ReLU() if hidden == "relu" else nn.Tanh()
    model = nn.Sequential(nn.Linear(6, 16), act, nn.Linear(16, 4))
    with torch.no_grad():
        model[2].bias += shift
    x, y = torch.randn(32, 6), torch.randint(0, 4, (32,))
    out = model(x)
    g = torch.autograd.grad(_loss(out, y, how), out)[0]  # the truth
    cut = float((g == 0).float().mean())
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with gradarg.watch(model) as w:
        opt.zero_grad()
        _loss(model(x), y, how).backward()
        opt.step()
    problems = " ".join(w.problems())
    named = re.search(r"a relu applied to the output of the model's last layer", problems)
    assert bool(named) == (how == "relu" and cut >= 0.25), (how, shift, cut, problems)


class _Sparse(nn.Module):  # a sparse autoencoder: the relu code is also an output
    def __init__(self):
        super().__init__()
        self.enc, self.dec = nn.Linear(6, 16), nn.Linear(16, 6)

    def forward(self, x):
        code = torch.relu(self.enc(x))
        return self.dec(code), code


@settings(max_examples=10, deadline=None)
@given(l1=st.sampled_from([0.01, 0.1, 1.0]), seed=st.integers(0, 2**16))
def test_a_hidden_relu_penalised_in_the_loss_is_not_named(l1, seed):
    torch.manual_seed(seed)
    model = _Sparse()
    x = torch.randn(32, 6)
    rec, code = model(x)
    g = torch.autograd.grad(F.mse_loss(rec, x) + l1 * code.abs().mean(), code)[0]
    assert float((code == 0).float().mean()) > 0.25  # the truth: a code cut in many places
    assert bool((g != 0).any())
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    with gradarg.watch(model) as w:
        opt.zero_grad()
        rec, code = model(x)
        (F.mse_loss(rec, x) + l1 * code.abs().mean()).backward()
        opt.step()
    assert "a relu applied to the output of the model's last layer" not in w.summary()
