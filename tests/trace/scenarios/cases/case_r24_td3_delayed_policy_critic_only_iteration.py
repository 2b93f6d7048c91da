"""A healthy TD3 iteration in which the actor is left alone on purpose: with ``policy_freq = 2``
the actor (and the target networks) are updated every second iteration, and the watched iteration
is an odd one, a critic-only update.  The twin critics regress onto the clipped double-Q target,
computed under ``torch.no_grad()`` with the target actor's smoothed action; the actor itself takes
no part in this loss, so its parameters get no gradient (``.grad`` stays ``None``) and do not
move.  The critics' gradients are finite and nonzero; nothing is wrong.

Source: https://costinchitic.wiki/notes/TD3 ("TD3 is an evolution of DDPG algorithms and it uses
an Actor-Critic framework with twin critics and delayed policy updates"; "Trick two: Delayed Policy
Updates: Policy updated less frequently than Q-functions"; "Trick three: Target Policy Smoothing:
Adds clipped noise to target actions").  Adapted: an agent module holding a ``Linear(3, 32),
Tanh, Linear(32, 1), Tanh`` actor and two ``Linear(4, 32), Tanh, Linear(32, 1)`` critics (the
target copies kept outside it), a replay batch of 64 random transitions, discount 0.99, policy
noise 0.2 clipped at 0.5, Adam at 3e-4 for the actor and the critics, the watched iteration the
second (index 1).
"""

import copy

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://costinchitic.wiki/notes/TD3"
DESCRIPTION = "healthy: TD3 critic-only iteration (policy_freq=2): the actor gets no gradient"
ASK = []
MUST = [
    [
        HEALTHY_OK,
        r"delayed",
        r"policy_freq",
        r"policy (update )?frequency",
        r"actor\.[^\n]*(not (used|part)|no gradient|not reached|did not reach|outside)",
    ]
]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
    r"critic\d?\.\S*[^\n]{0,40}\bzero",
]
POLICY_FREQ, GAMMA = 2, 0.99


def q_net():
    return nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 1))


class Agent(nn.Module):
    def __init__(self):
        super().__init__()
        self.actor = nn.Sequential(nn.Linear(3, 32), nn.Tanh(), nn.Linear(32, 1), nn.Tanh())
        self.critic1, self.critic2 = q_net(), q_net()


def batch():
    g = torch.Generator().manual_seed(1)
    s, s2 = torch.randn(64, 3, generator=g), torch.randn(64, 3, generator=g)
    a = torch.rand(64, 1, generator=g) * 2 - 1
    return s, a, torch.randn(64, 1, generator=g), s2, torch.randn(64, 1, generator=g)


def step(watch, iteration=1):
    torch.manual_seed(0)
    agent = Agent()
    target = copy.deepcopy(agent).requires_grad_(False)
    actor_opt = torch.optim.Adam(agent.actor.parameters(), lr=3e-4)
    critic_opt = torch.optim.Adam(
        [*agent.critic1.parameters(), *agent.critic2.parameters()], lr=3e-4
    )
    s, a, r, s2, noise = batch()
    before = {n: p.detach().clone() for n, p in agent.named_parameters()}
    with watch(agent) as w:
        with torch.no_grad():
            a2 = (target.actor(s2) + (0.2 * noise).clamp(-0.5, 0.5)).clamp(-1, 1)
            sa2 = torch.cat([s2, a2], 1)
            y = r + GAMMA * torch.min(target.critic1(sa2), target.critic2(sa2))
        sa = torch.cat([s, a], 1)
        critic_loss = F.mse_loss(agent.critic1(sa), y) + F.mse_loss(agent.critic2(sa), y)
        critic_opt.zero_grad()
        critic_loss.backward()
        critic_opt.step()
        if iteration % POLICY_FREQ == 0:  # delayed policy update: not on this iteration
            actor_loss = -agent.critic1(torch.cat([s, agent.actor(s)], 1)).mean()
            actor_opt.zero_grad()
            actor_loss.backward()
            actor_opt.step()
    return Run(w=w, agent=agent, before=before)


def truth(run):
    for n, p in run.agent.named_parameters():
        if n.startswith("actor."):
            assert p.grad is None and torch.equal(p.detach(), run.before[n]), n
        else:
            assert bool(torch.isfinite(p.grad).all()) and bool(p.grad.abs().sum() > 0), n
            assert not torch.equal(p.detach(), run.before[n]), n
