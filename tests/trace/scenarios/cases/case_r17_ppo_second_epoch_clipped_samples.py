"""Control, a healthy step people suspect: two PPO update epochs on one rollout, with the rollout's
log-probabilities stored under ``torch.no_grad()``. In the first epoch the ratio is exactly 1 and
every sample contributes; Adam moves the policy, and in the second epoch some samples' ratios are
beyond the clip range on the side their advantage pushes (ratio > 1.2 with a positive advantage, or
< 0.8 with a negative one): the clipped term is the minimum and those samples contribute exactly no
gradient, by design. The other samples still give every parameter a finite nonzero gradient.

Source: https://rlbook.pages.dev/chapters/ppo/ppo-algorithm ("r_t(θ) = π_θ(a_t|s_t) /
π_θold(a_t|s_t) is the probability ratio"; "The gradient for the clipped region is zero, so the
policy stops updating once it hits the clip boundary"). Adapted: a tanh policy over 3 actions on 64
synthetic 4-dimensional states, normalised synthetic advantages, clip 0.2, Adam, two epochs.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.distributions import Categorical

SOURCE = "https://rlbook.pages.dev/chapters/ppo/ppo-algorithm"
DESCRIPTION = "control: PPO, stored old log-probs, 2nd epoch: clipped samples give no gradient"
ASK = []
MUST = [[HEALTHY_OK, r"clip\w*"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all-?zero",
    r"(not|never) detached",
    r"not in (the |any )?optimizer",
]
CLIP = 0.2


def make_policy():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 3))


def rollout():
    g = torch.Generator().manual_seed(1)
    states = torch.randn(64, 4, generator=g)
    adv = torch.randn(64, generator=g)
    return states, (adv - adv.mean()) / (adv.std() + 1e-8), g


def step(watch):
    policy = make_policy()
    optimizer = torch.optim.Adam(policy.parameters(), lr=0.05)
    states, adv, g = rollout()
    with torch.no_grad():
        dist = Categorical(logits=policy(states))
        actions = torch.multinomial(dist.probs, 1, generator=g).squeeze(1)
        old_logp = dist.log_prob(actions)
    before = [p.detach().clone() for p in policy.parameters()]
    ratios, grads = [], []
    with watch(policy) as w:
        for _ in range(2):
            optimizer.zero_grad()
            logp = Categorical(logits=policy(states)).log_prob(actions)
            ratio = torch.exp(logp - old_logp)
            surr = torch.min(ratio * adv, ratio.clamp(1 - CLIP, 1 + CLIP) * adv)
            loss = -surr.mean()
            loss.backward()
            ratios.append(ratio.detach())
            grads.append([p.grad.detach().clone() for p in policy.parameters()])
            optimizer.step()
    after = [p.detach().clone() for p in policy.parameters()]
    return Run(w=w, ratios=ratios, grads=grads, adv=adv, before=before, after=after)


def truth(run):
    assert len(run.ratios) == 2
    assert bool((run.ratios[0] == 1).all())
    r = run.ratios[1]
    clipped = ((run.adv > 0) & (r > 1 + CLIP)) | ((run.adv < 0) & (r < 1 - CLIP))
    assert 0 < int(clipped.sum()) < len(r)  # some samples clipped in the second epoch
    for gs in run.grads:
        for g in gs:
            assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
    for b, a in zip(run.before, run.after, strict=True):
        assert not torch.equal(a, b)
