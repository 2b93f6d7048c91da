"""A SAC actor update whose tanh-squashed Gaussian log-likelihood applies the change-of-variables
correction literally, ``log_prob(u) - log(1 - tanh(u)**2)``, with no epsilon.  The policy's mean
is a linear function of raw observations, and a few states lie far from the others: there the
pre-squash action ``u`` exceeds 9 in magnitude, ``tanh(u)`` rounds to exactly +-1 in float32 and
``1 - a**2`` is exactly 0.  ``log(0) = -inf`` makes those log-probabilities +inf, the actor loss
``alpha * log_pi - Q`` is inf, and the backward turns ``-2a / (1 - a**2) = -inf`` times
``tanh'(u) = 0`` into NaN: every gradient of the policy is NaN.

Source: https://math.techqa.club/change-of-variables-apply-tanh-to-the-gaussian-samples-3108216
(the SAC paper's Appendix C: "we apply an invertible squashing function (tanh) to the Gaussian
samples, and employ the change of variables formula to compute the likelihoods of the bounded
actions"; ``pi(a|s) = mu(u|s) |det(da/du)|^{-1}``).  Adapted: the correction written as
``torch.log(1 - a.pow(2))`` summed over two action dimensions, a linear Gaussian policy
(``Linear(4, 2)`` mean, a state-independent ``log_std`` at 0), 64 states of which 4 are scaled by
50 (states far from the start), a frozen ``Linear(6, 32), Tanh, Linear(32, 1)`` critic outside
the watched policy, ``alpha = 0.2``, the noise drawn from a seeded generator, Adam at 3e-4.
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.distributions import Normal

SOURCE = "https://math.techqa.club/change-of-variables-apply-tanh-to-the-gaussian-samples-3108216"
DESCRIPTION = "SAC log_prob - log(1 - tanh(u)^2) with no epsilon: saturated actions give NaN"
ASK = []
MUST = [
    [r"\bnan\b", r"non-?finite", r"\binf\b"],
    [
        r"\blog\b",
        r"tanh",
        r"saturat\w*",
        r"1 - a",
        r"log_?prob",
        r"correction",
        r"jacobian",
        r"epsilon",
    ],
]
MUST_NOT = [FALSE_OK, r"explod", r"learning rate"]
ALPHA = 0.2


class LinearGaussianPolicy(nn.Module):
    def __init__(self):
        super().__init__()
        self.mu = nn.Linear(4, 2)
        self.log_std = nn.Parameter(torch.zeros(2))

    def forward(self, obs, noise, eps):
        mean, std = self.mu(obs), self.log_std.exp()
        u = mean + std * noise
        a = torch.tanh(u)
        log_pi = Normal(mean, std).log_prob(u) - torch.log(1 - a.pow(2) + eps)
        return a, u, log_pi.sum(-1)


def critic():
    torch.manual_seed(2)
    q = nn.Sequential(nn.Linear(6, 32), nn.Tanh(), nn.Linear(32, 1))
    return q.requires_grad_(False)


def data():
    g = torch.Generator().manual_seed(1)
    obs = 2.0 * torch.randn(64, 4, generator=g)
    obs[:4] *= 50.0  # a few states far from the others
    return obs, torch.randn(64, 2, generator=g)


def step(watch, eps=0.0):
    q = critic()
    torch.manual_seed(0)
    policy = LinearGaussianPolicy()
    optimizer = torch.optim.Adam(policy.parameters(), lr=3e-4)
    obs, noise = data()
    with watch(policy) as w:
        optimizer.zero_grad()
        a, u, log_pi = policy(obs, noise, eps)
        loss = (ALPHA * log_pi - q(torch.cat([obs, a], -1)).squeeze(-1)).mean()
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in policy.named_parameters()}
        optimizer.step()
    return Run(w=w, policy=policy, a=a.detach(), u=u.detach(), loss=loss.detach(), grads=grads)


def truth(run):
    saturated = run.a.abs() == 1.0
    assert bool(saturated.any()) and bool((run.u[saturated].abs() > 9).all())
    assert bool((1 - run.a.pow(2) == 0).any())  # the log's argument is exactly 0
    assert torch.isinf(run.loss)
    for n, g in run.grads.items():
        assert bool(torch.isnan(g).any()), n
