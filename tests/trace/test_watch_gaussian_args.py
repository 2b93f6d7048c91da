"""Class: ``gaussian_nll_loss(input, target, var)`` called as ``(mean, var, target)`` reads the
model's variance as the target and the data as the variance; nothing raises while the data are
positive.  The watch names a call whose target carries gradient while its variance does not;
the right order, keyword arguments, a fixed variance with a data target, or a target that
carries gradient beside a learned variance in its place are not named.

The truth comes from torch alone: the generated call's loss against the loss of the right call
(input, target, var) on the same tensors: a swap changes the value.  Generated: how the call is
written (functional or the module, positional or keyword), swapped or not, the variance
learned or fixed, the seed.
"""

from __future__ import annotations

import re

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

import gradarg


class Heads(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(3, 16), nn.Tanh())
        self.mean, self.var = nn.Linear(16, 1), nn.Linear(16, 1)

    def forward(self, x):
        h = self.body(x)
        return self.mean(h), F.softplus(self.var(h)) + 1e-3


def _call(how, swapped, mean, target, var):
    a, b = (var, target) if swapped else (target, var)
    if how == "functional":
        return F.gaussian_nll_loss(mean, a, b)
    if how == "keywords":
        return F.gaussian_nll_loss(input=mean, target=a, var=b)
    return nn.GaussianNLLLoss()(mean, a, b)


@settings(max_examples=30, deadline=None)
@given(how=st.sampled_from(["functional", "keywords", "module"]), swapped=st.booleans(),
       fixed=st.booleans(), live=st.booleans(), seed=st.integers(0, 2**16))
def test_a_gaussian_nll_with_target_and_variance_swapped_is_named(how, swapped, fixed, live,
                                                                   seed):
    torch.manual_seed(seed)
    model = Heads()
    x = torch.randn(32, 3)
    target = x[:, :1].abs() + 0.5  # positive data: a swap raises nothing
    if live:  # a target that carries gradient, the learned variance in its place
        swapped, fixed = False, False
    mean, var = model(x)
    if live:
        target = mean.detach() + model(x + 0.1)[0]
    if fixed:
        var = torch.full_like(var, 0.5)  # a fixed variance, no gradient
    right = F.gaussian_nll_loss(mean, target, var)
    given_loss = _call(how, swapped, mean, target, var)
    assert swapped == (not torch.allclose(right, given_loss))  # the truth from torch
    assert not live or (target.requires_grad and var.requires_grad)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with gradarg.watch(model) as w:
        opt.zero_grad()
        mean, var = model(x)
        if fixed:
            var = torch.full_like(var, 0.5)
        if live:
            target = mean.detach() + model(x + 0.1)[0]
        _call(how, swapped, mean, target, var).backward()
        opt.step()
    problems = " ".join(w.problems())
    named = re.search(r"gaussian_nll_loss\(input, target, var\) was given a target", problems)
    # a swapped fixed variance puts a constant in the target's place: nothing carries gradient
    assert bool(named) == (swapped and not fixed), (how, swapped, fixed, problems)
