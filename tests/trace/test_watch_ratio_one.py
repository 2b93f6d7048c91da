"""Class: a ratio ``exp(a - b)`` or ``a / b`` that is exactly 1 in every entry while both sides
carry gradient (PPO's ``exp(logp - old_logp)`` with the rollout's log-probabilities kept
with their graph): where ``b`` was computed by the same weights, the two paths cancel and the
policy gradient is zero.  The watch names the ratio; with ``b`` detached, or a ratio that is
not 1 everywhere (after an update), it says nothing of the kind.

The truth comes from torch alone: the ratio's values, whether ``b`` requires grad, and the
gradient ``torch.autograd.grad`` gives the policy's parameters (all zero in the cancelling
case).  Generated: the form (exp of a difference, a quotient of probabilities), how ``b`` is
made (kept with its graph, detached, from weights moved a little), the batch and the seed.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg


@settings(max_examples=25, deadline=None)
@given(form=st.sampled_from(["exp", "div"]),
       old=st.sampled_from(["graph", "graph", "detached", "moved"]),
       batch=st.integers(2, 16), seed=st.integers(0, 2**16))
def test_a_ratio_of_equal_sides_with_gradient_is_named(form, old, batch, seed):
    torch.manual_seed(seed)
    policy = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    states = torch.randn(batch, 4)
    actions = torch.randint(0, 3, (batch,))
    adv = torch.randn(batch)

    def logp_of(net):
        return torch.log_softmax(net(states), 1).gather(1, actions[:, None]).squeeze(1)

    before = logp_of(policy)
    if old == "detached":
        before = before.detach()
    elif old == "moved":
        with torch.no_grad():
            policy[2].bias.add_(0.1 * torch.arange(3.0))

    def ratio_of(logp):
        return torch.exp(logp - before) if form == "exp" else logp.exp() / before.exp()

    def loss_of(ratio):
        return -torch.min(ratio * adv, ratio.clamp(0.8, 1.2) * adv).mean()

    # the truth, first (b's graph is kept for the watched step): the gradient torch gives
    params = list(policy.parameters())
    truth = torch.autograd.grad(loss_of(ratio_of(logp_of(policy))), params, retain_graph=True,
                                allow_unused=True, materialize_grads=True)
    with gradarg.watch(policy) as w:
        logp = logp_of(policy)
        ratio = ratio_of(logp)
        loss_of(ratio).backward()
    ones = bool((ratio.detach() == 1).all())
    cancels = ones and before.requires_grad
    text = " ".join(w.problems())
    named = f"the loss takes a ratio {'exp(a - b)' if form == 'exp' else 'a / b'} that is " \
            f"exactly 1 in all {batch} entries"
    assert (named in text) == cancels, (text, ones, old)
    if old == "graph" and form == "exp":  # b is a by the same weights: exact cancellation
        assert cancels and all(bool((g == 0).all()) for g in truth)
    if not cancels:
        assert any(bool(g.abs().sum() > 0) for g in truth)
