"""Advantage-weighted regression on a replay buffer: a value network fitted to the returns and a
Gaussian policy fitted by weighted maximum likelihood, ``loss_pi = -(exp(A / beta) * log pi(a|s)).
mean()`` with ``A = R - V(s)`` (``V`` detached) and the paper's temperature ``beta = 0.05``, the
weights left unclipped.  The buffer's returns reach 9 while the untrained value network predicts
about 0, so ``A / beta`` reaches 180 and ``exp`` overflows float32 (above 88.7) to ``inf``: the
policy loss is infinite, and its backward multiplies ``inf`` by the log-likelihood's derivatives,
so the policy's gradients are ``inf``/``NaN``.  The value loss, on its own graph through ``V``, stays
finite, and so do the value network's gradients.  Adam's step then writes NaN into the policy.

Source: https://www.emergentmind.com/topics/advantage-weighted-regression-awr-26f39b0b-0be3-4644-a35d-678b68d9d4a9
("It employs exponentiated advantage weights in actor updates"; "each observed pair receives an
exponentially weighted scalar, and the parametric policy is updated by maximum weighted
log-likelihood").  Adapted: a policy ``Linear(4, 32), Tanh, Linear(32, 2)`` with a learned log
standard deviation, a value network ``Linear(4, 32), Tanh, Linear(32, 1)``, 64 transitions whose
returns are spread over 0 to 9, both losses summed, Adam at 1e-3.
"""

import math

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn

SOURCE = (
    "https://www.emergentmind.com/topics/advantage-weighted-regression-awr-26f39b0b-0be3-4644-"
    "a35d-678b68d9d4a9"
)
DESCRIPTION = "AWR weights exp(A / 0.05) unclipped: overflow to inf, policy gradients NaN"
ASK = []
MUST = [
    [r"\bnan\b|\binf\b|non-?finite|infinit\w*|overflow\w*"],
    [r"\bexp\b|exponen\w*", r"weights?", r"clip\w*|clamp\w*", r"beta|temperature", r"advantages?"],
]
MUST_NOT = [FALSE_OK]
BETA = 0.05


class AWR(nn.Module):
    def __init__(self):
        super().__init__()
        self.policy = nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 2))
        self.log_std = nn.Parameter(torch.zeros(2))
        self.value = nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 1))


def buffer():
    g = torch.Generator().manual_seed(4)
    states = torch.randn(64, 4, generator=g)
    actions = torch.randn(64, 2, generator=g).clamp(-2, 2)
    returns = torch.linspace(0, 9, 64)[torch.randperm(64, generator=g)]
    return states, actions, returns


def step(watch, clip=None):
    torch.manual_seed(0)
    model = AWR()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    states, actions, returns = buffer()
    with watch(model) as w:
        optimizer.zero_grad()
        v = model.value(states).squeeze(-1)
        value_loss = (returns - v).pow(2).mean()
        advantage = returns - v.detach()
        weights = torch.exp(advantage / BETA)
        if clip is not None:
            weights = weights.clamp(max=clip)
        dist = torch.distributions.Normal(model.policy(states), model.log_std.exp())
        policy_loss = -(weights * dist.log_prob(actions).sum(-1)).mean()
        (policy_loss + value_loss).backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(
        w=w, grads=grads, weights=weights.detach(), policy_loss=float(policy_loss.detach()),
        value_loss=float(value_loss.detach()), advantage=advantage,
        after={n: p.detach().clone() for n, p in model.named_parameters()},
    )  # fmt: skip


def truth(run):
    assert float(run.advantage.max()) / BETA > 88.8  # past float32's exp range
    assert bool(torch.isinf(run.weights).any())
    assert not math.isfinite(run.policy_loss)
    assert math.isfinite(run.value_loss)
    for n, g in run.grads.items():
        if n.startswith("value."):
            assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        else:
            assert not bool(torch.isfinite(g).all()), n
    assert bool(torch.isnan(run.after["policy.2.weight"]).any())
