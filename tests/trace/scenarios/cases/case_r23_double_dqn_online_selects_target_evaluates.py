"""A healthy Double DQN update as Coach describes it: the online network picks the next action
(``argmax_a Q_online(s', a)``), the target network evaluates it, the played action's target is
``r + gamma * Q_target(s', a*)`` (zero past a terminal state), and the targets of the actions not
played are set to the online network's own current predictions, so that the squared error over
all actions is zero for them.  Targets are computed without gradient.  Per example only the
played action's output carries an error, but both actions are played in the batch, so every
parameter of the online network gets a finite, nonzero gradient; the target network (not
watched, not in the optimizer) gets none.

Source: https://intellabs.github.io/coach/components/agents/value_optimization/double_dqn.html
("run the online network in order to find the Q maximizing action"; "run the target network to
calculate Q(s_{t+1}, argmax_a Q(s_{t+1}, a))"; "In order to zero out the updates for the actions
that were not played ... Set those values as the targets for the actions that were not actually
played").  Adapted: a ``Linear(4, 32)``, ``Tanh``, ``Linear(32, 2)`` Q-network, the target a copy
taken before 10 online steps, 64 random transitions, gamma 0.99, Adam at 1e-3.
"""

import copy

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://intellabs.github.io/coach/components/agents/value_optimization/double_dqn.html"
DESCRIPTION = "healthy: Double DQN, online argmax, target evaluates, unplayed targets = predictions"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"\bdead\b",
    r"not detached",
    r"requires_grad\s*(=|is|was)?\s*False",
]
GAMMA = 0.99


def data():
    g = torch.Generator().manual_seed(1)
    s = torch.randn(64, 4, generator=g)
    a = torch.randint(0, 2, (64,), generator=g)
    r = torch.randn(64, generator=g)
    s2 = s + 0.1 * torch.randn(64, 4, generator=g)
    done = torch.rand(64, generator=g) < 0.1
    return s, a, r, s2, done


def targets(online, target, s, a, r, s2, done):
    with torch.no_grad():
        best = online(s2).argmax(1)  # selection by the online network
        evaluated = target(s2).gather(1, best[:, None]).squeeze(1)  # evaluation by the target
        y = online(s).clone()  # unplayed actions: their own prediction, zero error
        y[torch.arange(len(a)), a] = r + GAMMA * evaluated * (~done).float()
    return y, best


def step(watch):
    torch.manual_seed(0)
    online = nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 2))
    target = copy.deepcopy(online)
    optimizer = torch.optim.Adam(online.parameters(), lr=1e-3)
    s, a, r, s2, done = data()
    for _ in range(10):  # the online network moves away from the copy
        y, _ = targets(online, target, s, a, r, s2, done)
        optimizer.zero_grad()
        F.mse_loss(online(s), y).backward()
        optimizer.step()
    target_before = [p.detach().clone() for p in target.parameters()]
    with watch(online) as w:
        y, best = targets(online, target, s, a, r, s2, done)
        optimizer.zero_grad()
        q = online(s)
        q.retain_grad()
        F.mse_loss(q, y).backward()
        grads = [p.grad.detach().clone() for p in online.parameters()]
        optimizer.step()
    return Run(w=w, online=online, target=target, target_before=target_before, a=a, q_grad=q.grad,
               grads=grads, best=best)  # fmt: skip


def truth(run):
    unplayed = torch.ones_like(run.q_grad, dtype=torch.bool)
    unplayed[torch.arange(len(run.a)), run.a] = False
    assert bool((run.q_grad[unplayed] == 0).all())  # zero error where not played
    assert set(run.a.tolist()) == {0, 1}
    for g in run.grads:
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
    for p, b in zip(run.target.parameters(), run.target_before, strict=True):
        assert p.grad is None and torch.equal(p.detach(), b)
