"""PPO with the rollout's log-probabilities kept with their graph. The rollout computes ``old_logp =
dist.log_prob(actions)`` from the same parameters without ``torch.no_grad()`` or ``.detach()``, and
the update uses it in ``ratio = exp(logp - old_logp)``. In the first update epoch the policy has not
moved, so ``logp`` and ``old_logp`` are the same numbers from two graphs on the same weights: the
ratio is exactly 1, and the gradient through ``logp`` is cancelled exactly by the gradient through
``old_logp``. Every parameter of the policy gets an all-zero gradient; the clipped surrogate loss is
``-mean(advantages)`` and the step changes nothing. Nothing raises.

Source: https://sanowl.github.io/ppo.html ("collect trajectories with π_{θ_old}"; "r = π_θ(a|s) /
π_{θ_old}(a|s)"; "L_clip = mean(min(r*Â, clip(r,1-ε,1+ε)*Â))"; "θ_old ← θ"). Adapted: a tanh policy
over 3 actions on 64 synthetic 4-dimensional states, normalised synthetic advantages, clip 0.2,
Adam, one update epoch.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.distributions import Categorical

SOURCE = "https://sanowl.github.io/ppo.html"
DESCRIPTION = "PPO old log-probs not detached: ratio exactly 1, policy gradient cancels to zero"
ASK = ["0.weight"]
MUST = [
    [r"all-?zero", r"\bzero gradient", r"gradients? (is|are|was|were) (exactly )?(zero|0)"],
    [
        r"old_?(log_?p|log[- ]prob)",
        r"ratio",
        r"detach\w*",
        r"rollout",
        r"cancel\w*",
        r"(two|both) (paths|graphs|branches)",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"not in (the |any )?optimizer", r"dead (units?|relu)"]
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
    dist = Categorical(logits=policy(states))
    actions = torch.multinomial(dist.probs.detach(), 1, generator=g).squeeze(1)
    old_logp = dist.log_prob(actions)  # kept with its graph: no no_grad, no detach
    before = [p.detach().clone() for p in policy.parameters()]
    with watch(policy) as w:
        optimizer.zero_grad()
        logp = Categorical(logits=policy(states)).log_prob(actions)
        ratio = torch.exp(logp - old_logp)
        surr = torch.min(ratio * adv, ratio.clamp(1 - CLIP, 1 + CLIP) * adv)
        loss = -surr.mean()
        loss.backward()
        grads = [p.grad.detach().clone() for p in policy.parameters()]
        optimizer.step()
    after = [p.detach().clone() for p in policy.parameters()]
    return Run(w=w, ratios=[ratio.detach()], grads=[grads], before=before, after=after)


def truth(run):
    assert bool((run.ratios[0] == 1).all())
    for g in run.grads[0]:
        assert bool((g == 0).all())  # the two graphs cancel exactly
    for b, a in zip(run.before, run.after, strict=True):
        assert torch.equal(a, b)
