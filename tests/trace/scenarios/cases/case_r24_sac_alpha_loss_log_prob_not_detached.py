"""A SAC update with automatic temperature tuning whose temperature loss uses the policy's
log-probabilities without ``detach()``: ``alpha_loss = -(log_alpha * (log_pi + target_entropy))
.mean()``, added to the actor loss and sent through one ``backward()`` before the policy's and the
temperature's optimizers step.  The temperature loss is meant to train ``log_alpha`` only; with
``log_pi`` attached it also sends ``-log_alpha * grad(log_pi)`` into the policy.  With
``alpha = 0.2`` (``log_alpha = -1.61``) the policy's entropy term is weighted by
``alpha - log_alpha = 1.81`` instead of 0.2: the policy's gradient is not the actor loss's.  Every
gradient is finite and nonzero; nothing raises.

Source: https://slm-lab.gitbook.io/slm-lab/development/algorithms/a2c/sac ("Update actor:
J(phi) = E[alpha log pi_phi(a|s) - min_j Q(s, a)]"; "Update temperature: J(alpha) = E[-alpha (log
pi_phi(a|s) + H_target)]"; "The temperature parameter alpha is automatically tuned to maintain a
target entropy").  Adapted: ``log_alpha`` learned (as SAC implementations do) and the two losses
summed into one backward; a Gaussian policy ``Linear(4, 32), Tanh`` with mean and log-std heads
``Linear(32, 2)``, tanh-squashed actions with the ``log(1 - a**2 + 1e-6)`` correction, target
entropy -2, a frozen ``Linear(6, 32), Tanh, Linear(32, 1)`` critic outside the agent, 64 states,
the noise from a seeded generator, Adam at 3e-4 for both.
"""

import copy

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.distributions import Normal

SOURCE = "https://slm-lab.gitbook.io/slm-lab/development/algorithms/a2c/sac"
DESCRIPTION = "SAC temperature loss with log_pi not detached: it also trains the policy"
ASK = []
MUST = [
    [r"log_?pi", r"log_?prob", r"alpha[_ ]loss", r"temperature", r"log_alpha", r"entropy"],
    [
        r"detach\w*",
        r"stop[- ]gradient",
        r"no_grad",
        r"(policy|actor)[^\n]*(also|extra|additional)[^\n]*grad\w*",
        r"(also|extra|additional)[^\n]*(grad\w*)[^\n]*(policy|actor)",
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"\bdead\b",
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
]
TARGET_ENTROPY = -2.0


class Agent(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 32), nn.Tanh())
        self.mean = nn.Linear(32, 2)
        self.log_std = nn.Linear(32, 2)
        self.log_alpha = nn.Parameter(torch.tensor(0.2).log())

    def sample(self, obs, noise):
        h = self.body(obs)
        mean, std = self.mean(h), self.log_std(h).clamp(-5, 2).exp()
        u = mean + std * noise
        a = torch.tanh(u)
        log_pi = Normal(mean, std).log_prob(u) - torch.log(1 - a.pow(2) + 1e-6)
        return a, log_pi.sum(-1)


def critic():
    torch.manual_seed(2)
    q = nn.Sequential(nn.Linear(6, 32), nn.Tanh(), nn.Linear(32, 1))
    return q.requires_grad_(False)


def data():
    g = torch.Generator().manual_seed(1)
    return torch.randn(64, 4, generator=g), torch.randn(64, 2, generator=g)


def losses(agent, q, obs, noise, detach):
    a, log_pi = agent.sample(obs, noise)
    alpha = agent.log_alpha.exp().detach()
    actor_loss = (alpha * log_pi - q(torch.cat([obs, a], -1)).squeeze(-1)).mean()
    target = (log_pi.detach() if detach else log_pi) + TARGET_ENTROPY
    alpha_loss = -(agent.log_alpha * target).mean()
    return actor_loss, alpha_loss


def step(watch, detach=False):
    q = critic()
    torch.manual_seed(0)
    agent = Agent()
    start = copy.deepcopy(agent)
    policy_opt = torch.optim.Adam(
        [p for n, p in agent.named_parameters() if n != "log_alpha"], 3e-4
    )
    alpha_opt = torch.optim.Adam([agent.log_alpha], lr=3e-4)
    obs, noise = data()
    with watch(agent) as w:
        policy_opt.zero_grad()
        alpha_opt.zero_grad()
        actor_loss, alpha_loss = losses(agent, q, obs, noise, detach)
        (actor_loss + alpha_loss).backward()
        grads = {n: p.grad.detach().clone() for n, p in agent.named_parameters()}
        policy_opt.step()
        alpha_opt.step()
    # the actor loss's own gradient, on a copy of the starting agent with the same noise
    actor_only, _ = losses(start, q, obs, noise, True)
    names = [n for n, _ in start.named_parameters() if n != "log_alpha"]
    params = [p for n, p in start.named_parameters() if n != "log_alpha"]
    wanted = dict(zip(names, torch.autograd.grad(actor_only, params), strict=True))
    return Run(w=w, agent=agent, grads=grads, wanted=wanted)


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    differ = [n for n, g in run.wanted.items() if not torch.allclose(run.grads[n], g, atol=1e-7)]
    assert set(differ) == set(run.wanted)  # every policy gradient is off
