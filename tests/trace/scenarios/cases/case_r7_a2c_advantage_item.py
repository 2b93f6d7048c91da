"""Control: the actor-critic of PyTorch's examples, one episode: the policy is called once per
state, each step's ``(log_prob, value)`` saved; at the end ``advantage = R - value.item()``,
``policy_loss = -log_prob * advantage`` and ``value_loss = smooth_l1_loss(value,
torch.tensor([R]))``, all summed, one backward, one step.  ``value.item()`` is a float, so the
policy term sends nothing into the value head: an ordinary step, which the asker found
"inconsistent with" the textbook's formulas.

Source: https://ai.stackexchange.com/questions/10336/why-is-this-pytorch-implementation-of-the-actor-critic-algorithm-inconsistent-wi
("This PyTorch implementation of the actor-critic algorithm calculates the losses like so:
actor_loss = -log_prob * discounted_reward; policy_loss = F.smooth_l1_loss(value,
torch.tensor([discounted_reward]))"; the answer: "the variations you posted roughly calculate the
same thing").
"""

import copy

import torch
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.distributions import Categorical
from torch.nn import functional as F

SOURCE = (
    "https://ai.stackexchange.com/questions/10336/"
    "why-is-this-pytorch-implementation-of-the-actor-critic-algorithm-inconsistent-wi"
)
DESCRIPTION = "control: PyTorch example A2C, advantage = R - value.item(): an ordinary step"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"not detached",
    r"should (be )?detach",
    r"carr(y|ies|ied) gradient",
    r"broadcast",
]


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.affine1 = nn.Linear(4, 128)
        self.action_head = nn.Linear(128, 2)
        self.value_head = nn.Linear(128, 1)

    def forward(self, x):
        x = F.relu(self.affine1(x))
        return F.softmax(self.action_head(x), dim=-1), self.value_head(x)


def episode():
    g = torch.Generator().manual_seed(1)
    states = torch.randn(12, 4, generator=g)
    rewards = [1.0] * 11 + [0.0]
    returns, R = [], 0.0
    for r in reversed(rewards):
        R = r + 0.99 * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    return states, (returns - returns.mean()) / (returns.std() + 1e-8)


def step(watch):
    torch.manual_seed(0)
    model = Policy()
    pristine = copy.deepcopy(model)
    opt = torch.optim.Adam(model.parameters(), lr=3e-2)
    states, returns = episode()
    with watch(model) as w:
        saved, actions = [], []
        for s in states:
            probs, value = model(s)
            m = Categorical(probs)
            action = m.sample()
            actions.append(action)
            saved.append((m.log_prob(action), value))
        policy_losses, value_losses = [], []
        for (log_prob, value), R in zip(saved, returns.tolist(), strict=True):
            advantage = R - value.item()
            policy_losses.append(-log_prob * advantage)
            value_losses.append(F.smooth_l1_loss(value, torch.tensor([R])))
        opt.zero_grad()
        loss = torch.stack(policy_losses).sum() + torch.stack(value_losses).sum()
        loss.backward()
        grads = {n: p.grad.clone() for n, p in model.named_parameters()}
        opt.step()
    # plain torch, on an untouched copy: the value head's gradient from the value losses alone
    values = pristine(states)[1]
    sum(
        F.smooth_l1_loss(v, torch.tensor([R]))
        for v, R in zip(values, returns.tolist(), strict=True)
    ).backward()
    expected = {n: p.grad for n, p in pristine.value_head.named_parameters()}
    return Run(w=w, grads=grads, expected=expected)


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    for n in ("weight", "bias"):
        assert torch.allclose(run.grads["value_head." + n], run.expected[n], atol=1e-6), n
