"""Control: a DQN step with a target network updated by Polyak averaging.  The agent holds the
online Q-network and its copy ``q_target`` (frozen with ``requires_grad_(False)``); the bootstrap
target ``r + gamma * max_a q_target(s', a)`` is computed under ``no_grad``; Adam steps the online
network; then ``q_target <- tau * q + (1 - tau) * q_target`` under ``no_grad`` (tau 0.005).  The
online network trains; the target network gets no gradient and moves only by the soft update.

Source: https://deeplearning-ey7.pages.dev/atomic-concepts/rl-specific/polyak-averaging ("Slowly
updating target network weights toward the online network: theta_target <- tau * theta + (1 -
tau) * theta_target, with tau << 1 (typically 0.005)").
"""

import copy

import torch
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn

SOURCE = "https://deeplearning-ey7.pages.dev/atomic-concepts/rl-specific/polyak-averaging"
DESCRIPTION = "control: DQN, frozen q_target, target under no_grad, Polyak soft update: healthy"
ASK = []
MUST = [
    [HEALTHY_OK, r"^summary:[^\n]*q_target[^\n]*(frozen|requires_grad|soft|polyak|outside|without)"]
]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"not detached",
    r"target[^\n]{0,60}(carries|sends|sent) gradient",
    r"q_target\.[^\n]{0,80}optimi[sz]er step[^\n]{0,20}moved",
]


def step(watch):
    torch.manual_seed(0)
    q = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2))
    agent = nn.ModuleDict({"q": q, "q_target": copy.deepcopy(q).requires_grad_(False)})
    optimizer = torch.optim.Adam(agent["q"].parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    s, s2 = torch.randn(32, 4, generator=g), torch.randn(32, 4, generator=g)
    a = torch.randint(0, 2, (32,), generator=g)
    r, done = torch.randn(32, generator=g), (torch.rand(32, generator=g) < 0.1).float()
    tau, gamma = 0.005, 0.99
    online0 = {n: p.detach().clone() for n, p in agent["q"].named_parameters()}
    target0 = {n: p.detach().clone() for n, p in agent["q_target"].named_parameters()}
    with watch(agent) as w:
        with torch.no_grad():
            y = r + gamma * (1 - done) * agent["q_target"](s2).max(1).values
        q_sa = agent["q"](s).gather(1, a[:, None]).squeeze(1)
        loss = nn.functional.smooth_l1_loss(q_sa, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            for pt, po in zip(agent["q_target"].parameters(), agent["q"].parameters(), strict=True):
                pt.mul_(1 - tau).add_(tau * po)
    online1 = {n: p.detach().clone() for n, p in agent["q"].named_parameters()}
    target1 = {n: p.detach().clone() for n, p in agent["q_target"].named_parameters()}
    tgrads = [p.grad for p in agent["q_target"].parameters()]
    return Run(
        w=w, online0=online0, online1=online1, target0=target0, target1=target1, tgrads=tgrads
    )


def truth(run):
    assert all(g is None for g in run.tgrads)
    for n in run.online0:
        assert not torch.equal(run.online0[n], run.online1[n]), n
        expected = 0.995 * run.target0[n] + 0.005 * run.online1[n]
        assert torch.allclose(run.target1[n], expected, atol=1e-6), n
