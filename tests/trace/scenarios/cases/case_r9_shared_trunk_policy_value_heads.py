"""Control: REINFORCE with a learned baseline as a value head on the policy's shared trunk.  One
forward gives move logits and a value; the loss is ``-(log_prob * (G - v).detach()).mean()`` plus
``0.5 * MSE(v, G)``, one backward and one Adam step: the trunk gets both heads' gradients, the
policy head only the policy term, the value head only the value term.

Source: https://c-f-h.github.io/post/reinforce-with-baseline ("a separate value head is attached to
the CNN feature layers, in parallel to the already existing MLP policy head"; "how to train this
value network, and how it can help us to improve the RL update").
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn

SOURCE = "https://c-f-h.github.io/post/reinforce-with-baseline"
DESCRIPTION = "control: shared trunk, policy + value heads, advantage detached, one backward"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"not detached",
    r"target[^\n]{0,60}(carries|sends|sent) gradient",
    r"all-zero",
]


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(12, 32), nn.ReLU())
        self.policy = nn.Linear(32, 7)
        self.value = nn.Linear(32, 1)

    def forward(self, s):
        h = self.trunk(s)
        return self.policy(h), torch.tanh(self.value(h)).squeeze(-1)


def step(watch):
    torch.manual_seed(0)
    model = ActorCritic()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    states = torch.randn(24, 12, generator=g)
    returns = torch.where(torch.rand(24, generator=g) < 0.5, -1.0, 1.0) * 0.9 ** torch.arange(24.0)
    with watch(model) as w:
        logits, v = model(states)
        dist = torch.distributions.Categorical(logits=logits)
        actions = torch.multinomial(dist.probs.detach(), 1, generator=g).squeeze(1)
        advantage = (returns - v).detach()
        loss = -(dist.log_prob(actions) * advantage).mean() + 0.5 * nn.functional.mse_loss(
            v, returns
        )
        optimizer.zero_grad()
        loss.backward()
        grads = {n: p.grad.clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, grads=grads)


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
