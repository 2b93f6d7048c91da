"""Class: a temporal-difference loss whose bootstrapped target ``r + gamma * V(s')`` keeps its
history (not under ``torch.no_grad()``, not detached): both sides of the regression come from
the same value network, and the gradient also flows through ``V(s')``.  The watch names it;
a fixed target, or two outputs of one module compared directly (a Siamese distance), say
nothing of it.

The truth comes from torch: whether the target requires grad, and whether the critic's
gradient differs from the semi-gradient one (the same loss with the target detached).
Generated: the target fixed or not, a ``done`` mask or not, squared or absolute error, the
discount, a Siamese distance or a ranking margin instead, the seed.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg

SAID = "bootstrapped target carries gradient"


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.value = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))

    def forward(self, s):
        return self.value(s).squeeze(-1)


@settings(max_examples=25, deadline=None)
@given(fixed=st.booleans(), done_mask=st.booleans(), squared=st.booleans(),
       gamma=st.sampled_from([0.9, 0.99]), other=st.sampled_from([None, None, "siamese", "margin"]),
       seed=st.integers(0, 2**16))
def test_a_bootstrapped_target_with_history_is_named(fixed, done_mask, squared, gamma, other,
                                                     seed):
    torch.manual_seed(seed)
    model = Critic()
    s, s2, r = torch.randn(8, 4), torch.randn(8, 4), torch.randn(8)
    done = (torch.rand(8) < 0.2).float()

    def loss_of(target):
        delta = target - model(s)
        return delta.pow(2).mean() if squared else delta.abs().mean()

    with gradarg.watch(model) as w:
        if other == "siamese":  # two outputs of one module compared directly: a distance
            target = model(s2)
        elif other == "margin":  # a ranking loss's margin + score(negative): not a target
            target = 1.0 + model(s2)
        elif fixed:
            with torch.no_grad():
                target = r + gamma * (1 - done if done_mask else 1) * model(s2)
        else:
            target = r + gamma * ((1 - done) * model(s2) if done_mask else model(s2))
        loss = loss_of(target)
        loss.backward()
    grads = [p.grad.clone() for p in model.parameters()]
    semi = torch.autograd.grad(loss_of(target.detach()), list(model.parameters()))
    carries = target.requires_grad
    assert carries == (not fixed or other is not None)  # the truth, from torch
    assert carries == any(not torch.allclose(g, h) for g, h in zip(grads, semi, strict=True))
    text = w.summary()
    assert (SAID in text) == (carries and other is None), text
