"""A QR-DQN step whose quantile Huber loss is written as in the paper, ``rho_tau^kappa(u) = |tau -
1{u < 0}| * L_kappa(u) / kappa`` with ``L_kappa(u) = 0.5 u^2`` for ``|u| <= kappa`` and ``kappa (|u|
- kappa / 2)`` otherwise, and called with ``kappa = 0`` to get the plain quantile (pinball) loss that
the limit kappa -> 0 gives.  With ``kappa = 0`` every pairwise TD error takes the second branch,
``0 * (|u| - 0) = 0``, and is divided by 0: every term is ``0 / 0 = NaN``, so is the loss, and the
backward of the division sends ``grad / 0`` times 0 down: every gradient of the quantile network is
NaN.  Nothing raises.

Source: https://arxiv.org/html/2401.02325v2 ("Distributional Reinforcement Learning (RL) estimates
return distribution mainly by learning quantile values via minimizing the quantile Huber loss
function, entailing a threshold parameter often selected heuristically"; "the classical Huber loss
function can be seen as an approximation of our proposed loss").  Adapted: a QR-DQN network
``Linear(6, 64), Tanh, Linear(64, 64), Tanh, Linear(64, 3 * 8)`` (3 actions, 8 quantiles at the
midpoints ``(2i + 1) / 16``), a frozen copy as the target network, 32 random transitions with gamma
0.99, the pairwise errors ``u_ij = T theta_j - theta_i`` summed over i and averaged over j, Adam at
5e-4.
"""

import copy

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn

SOURCE = "https://arxiv.org/html/2401.02325v2"
DESCRIPTION = "quantile Huber loss L_kappa(u) / kappa called with kappa = 0: 0 / 0, NaN everywhere"
ASK = []
MUST = [
    [r"\bnan\b"],
    [
        r"kappa",
        r"κ",
        r"\b0\s?/\s?0\b",
        r"divi\w* by (zero|0)\b",
        r"/ ?(zero|0)\b",
        r"huber",
        r"threshold",
        r"\bdiv\w*",
    ],
]
MUST_NOT = [FALSE_OK, r"\bdead\b", r"requires_grad\s*(=|is|was)?\s*False"]
ACTIONS, N, GAMMA = 3, 8, 0.99


def qnet():
    return nn.Sequential(
        nn.Linear(6, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, ACTIONS * N)
    )


def transitions():
    g = torch.Generator().manual_seed(1)
    s, s2 = torch.randn(32, 6, generator=g), torch.randn(32, 6, generator=g)
    a = torch.randint(0, ACTIONS, (32,), generator=g)
    r = torch.randn(32, generator=g)
    done = (torch.rand(32, generator=g) < 0.1).float()
    return s, a, r, s2, done


def quantile_huber(u, tau, kappa):
    huber = torch.where(u.abs() <= kappa, 0.5 * u**2, kappa * (u.abs() - 0.5 * kappa))
    return (tau - (u.detach() < 0).float()).abs() * huber / kappa


def step(watch, kappa=0.0):
    torch.manual_seed(0)
    online = qnet()
    target = copy.deepcopy(online).requires_grad_(False)
    optimizer = torch.optim.Adam(online.parameters(), lr=5e-4)
    s, a, r, s2, done = transitions()
    tau = (2 * torch.arange(N) + 1).float() / (2 * N)
    with torch.no_grad():
        next_q = target(s2).view(-1, ACTIONS, N)
        best = next_q.mean(2).argmax(1)
        t_theta = r[:, None] + GAMMA * (1 - done[:, None]) * next_q[torch.arange(32), best]
    with watch(online) as w:
        optimizer.zero_grad()
        theta = online(s).view(-1, ACTIONS, N)[torch.arange(32), a]  # (32, N)
        u = t_theta[:, None, :] - theta[:, :, None]  # u[b, i, j] = T theta_j - theta_i
        loss = quantile_huber(u, tau[None, :, None], kappa).sum(1).mean()
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in online.named_parameters()}
        optimizer.step()
    return Run(w=w, loss=float(loss.detach()), grads=grads, kappa=kappa)


def truth(run):
    assert run.kappa == 0.0
    assert torch.isnan(torch.tensor(run.loss))
    for n, g in run.grads.items():
        assert bool(torch.isnan(g).all()), n
