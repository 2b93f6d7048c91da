"""Control: a Gaussian actor-critic (shangtongzhang's ``GaussianActorCriticNet``): the action's
standard deviation is ``softplus(self.std)`` with ``self.std = nn.Parameter(torch.zeros(
action_dim))``, the loss is the policy-gradient term with a detached advantage, minus an entropy
bonus, plus the value loss.  ``std`` starts at zeros and is a parameter like any other: the
log-probability and the entropy both depend on it, it gets a nonzero gradient and moves.

Source: https://discuss.pytorch.org/t/understanding-enropy/34677 ("The distribution is driven by
the line self.std = nn.Parameter(torch.zeros(action_dim)) where the softplus function is applied
to this to get a distribution. Isn't this just a bunch of zeros that never change?").
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://discuss.pytorch.org/t/understanding-enropy/34677"
DESCRIPTION = "control: Gaussian policy, std = Parameter(zeros) through softplus: it trains"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"no gradient",
    r"never (moved|changed|updated)",
    r"all-?zero",
    r"not (held|in (the|any) optimizer)",
]


class GaussianActorCriticNet(nn.Module):
    def __init__(self, state_dim: int = 6, action_dim: int = 2):
        super().__init__()
        self.phi_body = nn.Sequential(nn.Linear(state_dim, 32), nn.Tanh())
        self.fc_action = nn.Linear(32, action_dim)
        self.fc_critic = nn.Linear(32, 1)
        self.std = nn.Parameter(torch.zeros(action_dim))

    def forward(self, obs, action=None):
        phi = self.phi_body(obs)
        mean = torch.tanh(self.fc_action(phi))
        v = self.fc_critic(phi)
        dist = torch.distributions.Normal(mean, F.softplus(self.std))
        if action is None:
            action = dist.sample()
        log_prob = dist.log_prob(action).sum(-1).unsqueeze(-1)
        entropy = dist.entropy().sum(-1).unsqueeze(-1)
        return action, log_prob, entropy, v


def step(watch):
    torch.manual_seed(0)
    model = GaussianActorCriticNet()
    g = torch.Generator().manual_seed(1)
    obs = torch.randn(64, 6, generator=g)
    returns = torch.randn(64, 1, generator=g)
    opt = torch.optim.Adam(model.parameters(), lr=3e-4)
    std_before = model.std.detach().clone()
    with watch(model) as w:
        opt.zero_grad()
        _, log_prob, entropy, v = model(obs)
        advantage = (returns - v).detach()
        loss = (
            -(log_prob * advantage).mean()
            - 0.01 * entropy.mean()
            + 0.5 * (returns - v).pow(2).mean()
        )
        loss.backward()
        std_grad = model.std.grad.clone()
        opt.step()
    return Run(w=w, model=model, std_before=std_before, std_grad=std_grad)


def truth(run):
    assert torch.equal(run.std_before, torch.zeros(2))
    assert bool((run.std_grad != 0).all())  # the zeros are a parameter with a gradient ...
    assert bool((run.model.std.detach() != 0).all())  # ... and they move
    for n, p in run.model.named_parameters():
        assert (
            p.grad is not None
            and bool(torch.isfinite(p.grad).all())
            and bool(p.grad.abs().sum() > 0)
        ), n
