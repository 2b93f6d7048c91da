"""A healthy first PPO update with a KL penalty to a frozen reference policy, in which the penalty
does nothing: the reference is a frozen copy of the policy taken before training (as RLHF does with
the SFT model), so at the first update the two distributions are identical, the KL divergence is
exactly 0 and its gradient is zero up to rounding; the importance ratio is exactly 1.  The
policy's gradient is that of the clipped surrogate, finite and nonzero; the reference gets none and
does not move.  Nothing is wrong: the penalty starts acting once the policy has moved.

Source: https://www.longformexplainers.com/llm-post-training/14-ppo-for-rlhf ("The fix — a KL
penalty to a frozen reference model — is the single most important practical detail in PPO-based
RLHF"; "A frozen copy of the policy (usually the SFT model) that RLHF and DPO stay close to via a
KL penalty").  Adapted: a categorical policy ``Linear(6, 32), Tanh, Linear(32, 4)`` over 64
states, actions sampled from a seeded generator, standardised random advantages, the clipped
surrogate (epsilon 0.2) plus 0.1 times the exact KL between the two distributions, Adam at 3e-4.
"""

import copy

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://www.longformexplainers.com/llm-post-training/14-ppo-for-rlhf"
DESCRIPTION = "healthy: PPO first update, policy == frozen reference: KL = 0 and no KL gradient"
ASK = []
MUST = [[HEALTHY_OK, r"\bKL\b", r"reference", r"first (step|update|iteration)"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"all[- ]zero",
    r"reference[^\n]{0,40}(is|same as|alias\w*)[^\n]{0,20}(the )?policy",
]
BETA, CLIP = 0.1, 0.2


def data():
    g = torch.Generator().manual_seed(1)
    states = torch.randn(64, 6, generator=g)
    advantages = torch.randn(64, generator=g)
    return states, (advantages - advantages.mean()) / advantages.std(), g


def losses(policy, reference, states, actions, old_logp, advantages):
    logp_all = F.log_softmax(policy(states), dim=1)
    with torch.no_grad():
        ref_all = F.log_softmax(reference(states), dim=1)
    logp = logp_all.gather(1, actions[:, None]).squeeze(1)
    ratio = torch.exp(logp - old_logp)
    surrogate = -torch.min(ratio * advantages, ratio.clamp(1 - CLIP, 1 + CLIP) * advantages).mean()
    kl = (logp_all.exp() * (logp_all - ref_all)).sum(1).mean()
    return surrogate, kl, ratio


def step(watch):
    torch.manual_seed(0)
    policy = nn.Sequential(nn.Linear(6, 32), nn.Tanh(), nn.Linear(32, 4))
    reference = copy.deepcopy(policy).requires_grad_(False)
    ref_before = [p.clone() for p in reference.parameters()]
    start = copy.deepcopy(policy)
    optimizer = torch.optim.Adam(policy.parameters(), lr=3e-4)
    states, advantages, g = data()
    with torch.no_grad():
        logp_rollout = F.log_softmax(policy(states), dim=1)
        actions = torch.multinomial(logp_rollout.exp(), 1, generator=g).squeeze(1)
        old_logp = logp_rollout.gather(1, actions[:, None]).squeeze(1)
    with watch(policy) as w:
        optimizer.zero_grad()
        surrogate, kl, ratio = losses(policy, reference, states, actions, old_logp, advantages)
        (surrogate + BETA * kl).backward()
        grads = {n: p.grad.detach().clone() for n, p in policy.named_parameters()}
        optimizer.step()
    # the two terms' own gradients on a copy of the starting policy
    s, k, _ = losses(start, reference, states, actions, old_logp, advantages)
    params = list(start.parameters())
    names = [n for n, _ in start.named_parameters()]
    g_surrogate = dict(zip(names, torch.autograd.grad(s, params, retain_graph=True), strict=True))
    g_kl = dict(zip(names, torch.autograd.grad(k, params), strict=True))
    return Run(
        w=w,
        grads=grads,
        kl=kl.item(),
        ratio=ratio.detach(),
        g_surrogate=g_surrogate,
        g_kl=g_kl,
        reference=reference,
        ref_before=ref_before,
    )


def truth(run):
    assert run.kl == 0.0 and bool((run.ratio == 1).all())
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        assert float(run.g_kl[n].abs().max()) < 1e-6 * float(run.g_surrogate[n].abs().max()) + 1e-9
    for p, before in zip(run.reference.parameters(), run.ref_before, strict=True):
        assert p.grad is None and torch.equal(p, before)
