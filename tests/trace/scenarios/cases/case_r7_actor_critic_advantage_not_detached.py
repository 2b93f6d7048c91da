"""An advantage actor-critic step with a shared body, an ``actor`` (policy logits) and a
``critic`` (state value) head, one loss ``-(log_prob * advantage).mean() + 0.5 * (R - V)^2``.  The
advantage ``R - V`` is not detached, so the policy term also sends gradient into the critic and
the shared body through ``V``: the critic is pushed by the policy loss, not only fitted to the
returns.

Source: https://medium.com/@awjuliani/hi-de66a5e3f147 ("The reason advantage is fed in separately
is because we don't actually want the gradients from advantage to change the value estimate. We
only want them to affect the policy probabilities.").
"""

import copy

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.distributions import Categorical

SOURCE = "https://medium.com/@awjuliani/hi-de66a5e3f147"
DESCRIPTION = "A2C: advantage R - V not detached: the policy loss's gradient reaches the critic"
ASK = []
MUST = [
    [
        r"detach",
        r"advantage",
        r"no_grad",
        r"carr(y|ies|ied) gradient",
        (
            r"gradient (flows?|leaks?|reach\w*|goes|went|sent) (back )?"
            r"(into|through|to) [^\n]{0,40}critic"
        ),
        r"target[^\n]{0,60}gradient",
    ]
]
MUST_NOT = [FALSE_OK]


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 32), nn.Tanh())
        self.actor = nn.Linear(32, 2)
        self.critic = nn.Linear(32, 1)

    def forward(self, s):
        h = self.body(s)
        return self.actor(h), self.critic(h).squeeze(1)


def batch():
    g = torch.Generator().manual_seed(1)
    states = torch.randn(64, 4, generator=g)
    actions = torch.randint(0, 2, (64,), generator=g)
    returns = torch.randn(64, generator=g) * 2 + 1
    return states, actions, returns


def losses(model, states, actions, returns, detach: bool):
    logits, values = model(states)
    log_prob = Categorical(logits=logits).log_prob(actions)
    advantage = returns - values
    if detach:
        advantage = advantage.detach()
    actor_loss = -(log_prob * advantage).mean()
    critic_loss = 0.5 * (returns - values).pow(2).mean()
    return actor_loss, critic_loss


def step(watch, detach: bool = False):
    torch.manual_seed(0)
    model = ActorCritic()
    pristine = copy.deepcopy(model)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    states, actions, returns = batch()
    with watch(model) as w:
        opt.zero_grad()
        actor_loss, critic_loss = losses(model, states, actions, returns, detach)
        (actor_loss + critic_loss).backward()
        grads = {n: p.grad.clone() for n, p in model.named_parameters()}
        opt.step()
    # plain torch, on an untouched copy: the critic's gradient from the critic loss alone
    _, critic_only = losses(pristine, states, actions, returns, detach=True)
    critic_only.backward()
    expected = {n: p.grad for n, p in pristine.named_parameters()}
    return Run(w=w, grads=grads, expected=expected)


def truth(run):
    for n in ("critic.weight", "critic.bias"):
        diff = (run.grads[n] - run.expected[n]).abs().max()
        assert float(diff) > 1e-3, n  # the policy term pushed the critic too
