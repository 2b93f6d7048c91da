"""Class: a policy-gradient loss ``-(A * logp)`` whose weight ``A`` (an advantage) carries
gradient from the log-probabilities of other samples: a reward that holds a KL term ``beta *
(logp - logp_ref)`` not detached, then RLOO's leave-one-out baseline, a group's mean, or the
batch's mean and standard deviation subtracted.  The watch names it instead of "ok".

The truth comes from torch alone: ``torch.func.jacrev`` of the test's own map from the
log-probabilities to the weight, whose off-diagonal entries are nonzero exactly when one
sample's weight moves with another's log-probability.  Look-alikes that must not be named: the
same weights detached, a per-sample reward with the KL term attached and no baseline, a focal
loss's ``(1 - p)^gamma`` (each weight reads its own sample only), and a weight from a separate
network that does not read the log-probabilities.  Generated: the weight's form, a sequence of
tokens or one action per sample, the product's order, the group size and the seed.  The watched
step's gradients equal the unwatched step's, bit for bit.
"""

from __future__ import annotations

import copy
import re

import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import gradarg

SAID = r"weight \(an advantage or reward\) that carries gradient from the log-probabilities"
BETA = 0.1


def weight(form, logp, score, groups, extra):
    """The weight of each sample, from its log-probability ``logp`` (N,) and ``score`` (N,)."""
    reward = score - BETA * logp  # the KL term against a reference of log-probability 0
    r = reward.view(groups, -1)
    k = r.shape[1]
    if form == "rloo":
        return (r - (r.sum(1, keepdim=True) - r) / (k - 1)).reshape(-1)
    if form == "group-mean":
        return (r - r.mean(1, keepdim=True)).reshape(-1)
    if form == "normalised":
        return (reward - reward.mean()) / (reward.std() + 1e-6)
    if form == "per-sample":
        return reward
    if form == "focal":
        return (1 - logp.exp()) ** 2
    if form == "learned":
        return extra
    raise AssertionError(form)


@settings(max_examples=40, deadline=None)
@given(form=st.sampled_from(["rloo", "group-mean", "normalised", "per-sample", "focal",
                             "learned"]),
       detach=st.booleans(), sequence=st.booleans(), swap=st.booleans(),
       k=st.sampled_from([2, 4]), seed=st.integers(0, 2**16))
def test_a_weight_that_reads_other_samples_log_probabilities_is_named(form, detach, sequence,
                                                                       swap, k, seed):
    torch.manual_seed(seed)
    groups, t, v = 3, (4 if sequence else 1), 6
    n = groups * k
    policy = nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, t * v))
    critic = nn.Linear(5, 1)
    x = torch.randn(n, 5)
    tokens = torch.randint(0, v, (n, t))
    score = torch.rand(n)

    def loss_of(policy, critic):
        ls = torch.log_softmax(policy(x).view(n, t, v), -1)
        logp = ls.gather(-1, tokens.unsqueeze(-1)).squeeze(-1).sum(-1)
        a = weight(form, logp, score, groups, critic(x).squeeze(-1))
        a = a.detach() if detach else a
        return -((logp * a) if swap else (a * logp)).mean()

    twin, twin_critic = copy.deepcopy(policy), copy.deepcopy(critic)
    loss_of(twin, twin_critic).backward()
    with gradarg.watch(policy) as w:
        loss_of(policy, critic).backward()
    text = w.summary(checks=False)
    for p, q in zip(policy.parameters(), twin.parameters(), strict=True):
        assert torch.equal(p.grad, q.grad)  # the watch changed nothing of the step
    # the truth: does one sample's weight move with another sample's log-probability?
    logp0 = torch.randn(n)
    jac = torch.func.jacrev(lambda lp: weight(form, lp, score, groups, torch.zeros(n)))(logp0)
    others = jac.fill_diagonal_(0).ne(0)
    expected = not detach and bool(others.any())
    said = re.search(SAID, text) is not None
    assert said == expected, text
    if said:
        assert not text.startswith("gradients ok"), text
        m = re.search(r"(\d+) of the other (\d+) samples", text)
        reads = int(others[0].sum())
        assert m is not None and int(m[2]) == n - 1 and int(m[1]) == reads, text
