"""An actor-critic update that reuses the log-probabilities computed while acting: the rollout runs
under ``torch.no_grad()`` (acting needs no gradient), ``dist.log_prob(action)`` is stored there,
and the update builds ``-(stored_log_prob * advantage).mean()`` from it, plus the critic's value
loss.  The stored log-probabilities have no graph: the policy term is a constant, the actor gets
no gradient (``.grad`` None) and never trains, while the critic trains on its value loss.

Source: https://whitmem.kr/read/425 (REINFORCE with ``torch.distributions.Categorical``: "c.log_prob()
... 이 계산 과정은 역시 텐서의 미분 정보와 연결되어 있기 때문에 로스 함수로 사용할 수 있게 된다", the
log-probability is usable as a loss because it is connected to the tensor's differentiation
graph; taken under ``no_grad`` it is not).  The step is a small actor-critic with separate
actor and critic networks, the rollout and the update in one watched block.
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.distributions import Categorical
from torch.nn import functional as F

SOURCE = "https://whitmem.kr/read/425"
DESCRIPTION = "log_prob stored from a no_grad rollout used in the policy loss: actor gets no grad"
ASK = ["actor.2.weight"]
MUST = [
    [r"^summary:[^\n]*actor\.\d"],
    [
        r"no_grad",
        r"without (autograd|grad|a graph)",
        r"grad(ient)? mode",
        r"no graph",
        r"(rollout|acting)",
        r"log_prob",
        r"constant",
        r"detach",
    ],
]
MUST_NOT = [FALSE_OK, r"^summary:[^\n]*critic\.\d[^\n]{0,60}(no gradient|\bNone\b)"]


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.actor = nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 3))
        self.critic = nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 1))


def step(watch, recompute: bool = False):
    torch.manual_seed(0)
    model = ActorCritic()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    g = torch.Generator().manual_seed(1)
    states = torch.randn(16, 4, generator=g)
    rewards = torch.randn(16, generator=g)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    with watch(model) as w:
        # rollout: act with the current policy, nothing to learn here
        with torch.no_grad():
            dist = Categorical(logits=model.actor(states))
            actions = dist.sample()
            stored_log_prob = dist.log_prob(actions)
        # update
        opt.zero_grad()
        values = model.critic(states).squeeze(1)
        advantage = (rewards - values).detach()
        if recompute:
            log_prob = Categorical(logits=model.actor(states)).log_prob(actions)
        else:
            log_prob = stored_log_prob
        policy_loss = -(log_prob * advantage).mean()
        value_loss = F.mse_loss(values, rewards)
        (policy_loss + 0.5 * value_loss).backward()
        opt.step()
    grads = {n: p.grad for n, p in model.named_parameters()}
    moved = {n: not torch.equal(p.detach(), before[n]) for n, p in model.named_parameters()}
    return Run(w=w, grads=grads, moved=moved, stored_requires_grad=stored_log_prob.requires_grad)


def truth(run):
    assert not run.stored_requires_grad
    for n, g in run.grads.items():
        if n.startswith("actor."):
            assert g is None and not run.moved[n], n
        else:
            assert g is not None and bool(g.abs().sum() > 0) and run.moved[n], n
