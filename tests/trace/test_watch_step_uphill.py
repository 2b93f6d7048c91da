"""Class: an optimizer step that moves entries along the gradient it read, uphill, where
nothing explains it (no momentum yet): a custom optimizer whose preconditioner or curvature
estimate is negative without its floor (Sophia's ``m / (rho * h + eps)`` instead of
``max(rho * h, eps)``).  Every gradient was finite and nonzero, and the watch said "ok".

Invariant: such a step is named when, to first order, it raises the loss as a whole, with the
share of sampled entries that went uphill close to torch's own share over every entry; a step
that descends as a whole is not named (Muon's orthogonalised update moves some entries along
their gradient); a descent optimizer's first step (SGD with or without weight decay, Adam,
AdamW, RMSprop, Adagrad, Muon) is never said to go uphill, nor a step with
``maximize=True``, nor a step taken with momentum held.  Truth from torch alone: the move of
each entry against its gradient (plus L2 weight decay).  Generated: the optimizer, the share
of negative preconditioner entries, the learning rate, the seed.
"""

from __future__ import annotations

import re

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg


class Preconditioned(torch.optim.Optimizer):
    """``p -= lr * g / d`` with ``d`` set before the first step (in the optimizer's state)."""

    def __init__(self, params, lr):
        super().__init__(params, {"lr": lr})

    def set_denominator(self, negative, generator):
        for group in self.param_groups:
            for p in group["params"]:
                d = 0.5 + torch.rand(p.shape, generator=generator)
                flip = torch.rand(p.shape, generator=generator) < negative
                self.state[p]["d"] = torch.where(flip, -d, d)

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                p.sub_(group["lr"] * p.grad / self.state[p]["d"])


def _make(kind, params, lr):
    return {
        "sgd": lambda: torch.optim.SGD(params, lr=lr),
        "sgd-decay": lambda: torch.optim.SGD(params, lr=lr, weight_decay=0.1),
        "adam": lambda: torch.optim.Adam(params, lr=lr),
        "adamw": lambda: torch.optim.AdamW(params, lr=lr),
        "adamw-decay": lambda: torch.optim.AdamW(params, lr=lr, weight_decay=0.5),
        "rmsprop": lambda: torch.optim.RMSprop(params, lr=lr),
        "adagrad": lambda: torch.optim.Adagrad(params, lr=lr),
        "adam-maximize": lambda: torch.optim.Adam(params, lr=lr, maximize=True),
        "momentum-second": lambda: torch.optim.SGD(params, lr=lr, momentum=0.99),
        "preconditioned": lambda: Preconditioned(params, lr),
        # orthogonalised update (weight matrices only): entries of either sign, a descent
        "muon": lambda: torch.optim.Muon([p for p in params if p.ndim == 2], lr=lr),
    }[kind]()


LOOK_ALIKES = ["sgd", "sgd-decay", "adam", "adamw", "adamw-decay", "rmsprop", "adagrad", "adam-maximize",
               "momentum-second", "muon"]


@pytest.mark.parametrize("kind", LOOK_ALIKES)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_descent_step_is_not_called_uphill(kind, seed):
    _check(kind, 0.0, 1e-2, seed)
    if kind.startswith("adamw"):  # gradients below eps: the decay moves more than Adam
        _check(kind, 0.0, 1e-2, seed, scale=1e-10)


@settings(max_examples=25, deadline=None)
@given(negative=st.sampled_from([0.0, 0.2, 0.5, 0.9]), lr=st.sampled_from([1e-3, 1e-2]),
       seed=st.integers(0, 2**16))
def test_an_uphill_first_step_is_named(negative, lr, seed):
    _check("preconditioned", negative, lr, seed)


def _check(kind, negative, lr, seed, scale=1.0):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 1))
    params = list(model.parameters())
    optimizer = _make(kind, params, lr)
    x, y = torch.randn(32, 3), torch.randn(32, 1)
    with torch.no_grad():
        model[2].weight.mul_(scale)  # small gradients for the first layer
    if kind == "preconditioned":
        optimizer.set_denominator(negative, torch.Generator().manual_seed(seed))
    if kind == "momentum-second":  # a first step outside the block: momentum is held
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
        optimizer.zero_grad()
        x = torch.randn(32, 3)  # another batch: its gradient can disagree with the momentum
    with gradarg.watch(model) as w:
        nn.functional.mse_loss(model(x), y).backward()
        before = [p.detach().clone() for p in params]
        grads = [p.grad.detach().clone() for p in params]
        optimizer.step()
    # the truth: the share of entries moved along their gradient (+ L2 weight decay)
    decay = 0.1 if kind == "sgd-decay" else 0.0  # L2: part of the gradient
    shrink = {"adamw": 0.01, "adamw-decay": 0.5}.get(kind, 0.0) * lr  # decoupled: p *= 1 - it
    along = total = 0
    first_order = size = 0.0  # sum of move * gradient, and of its absolute value
    for p, b, g in zip(params, before, grads, strict=True):
        ref = g + decay * b
        move = p.detach() - b * (1 - shrink)
        along += int((move * ref > 0).sum())
        total += int((ref != 0).sum())
        first_order += float((move * ref).sum())
        size += float((move * ref).abs().sum())
    share = along / total
    text = w.summary(checks=False)
    said = re.search(r"moved (\d+) of (\d+) sampled entries along the gradient it read, uphill",
                     text)
    if kind == "adam-maximize":  # maximising: every entry goes along its gradient, by design
        assert share == 1.0 and said is None, text
        return
    if kind == "muon":  # mixes entries: some move along their gradient, the step descends
        assert first_order < 0 and said is None, (first_order, text)
        return
    if kind == "momentum-second" or share == 0:
        assert said is None, text
        assert kind != "preconditioned" or negative == 0.0
        return
    assert kind == "preconditioned", (kind, share)  # no descent optimizer goes uphill
    if first_order < -0.2 * size:  # a descent as a whole, to first order
        assert said is None, (share, first_order, size, text)
    if share >= 0.3 and first_order > 0.2 * size:
        assert said is not None, text
        assert abs(int(said[1]) / int(said[2]) - share) <= 0.25, (share, text)
        assert not text.startswith("gradients ok"), text
