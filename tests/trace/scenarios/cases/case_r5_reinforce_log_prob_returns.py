"""Control: a REINFORCE step.  Actions are sampled from ``Categorical`` (not differentiable), the
loss is ``-(log_prob(action) * return).sum()``: the gradient reaches the policy through the log
probabilities of the sampled actions, and every parameter of the policy gets a finite, nonzero
gradient.  Users doubt this "loss"; the step is healthy.

Source: https://discuss.pytorch.org/t/understanding-reinforce-implementation/13101 ("How it's
commonly implemented in neural networks in code is by taking the gradient of reward times
logprob. loss = reward*logprob ... What I'm not comfortable with is interpreting reward*logprob
as a 'loss'").
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.distributions import Categorical

SOURCE = "https://discuss.pytorch.org/t/understanding-reinforce-implementation/13101"
DESCRIPTION = "control: REINFORCE, -(log_prob * return): every policy parameter gets a gradient"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_NO_ZERO_GRAD,
    CLAIMS_ERROR,
    r"no gradient",
    r"(action|sample)[^\n]{0,40}(not differentiable|no gradient|cut)",
]

GAMMA = 0.99


def reward(state, action):
    """A fixed toy environment: reward 1 when the action matches the sign of the first feature."""
    return 1.0 if int(action) == int(state[0] > 0) else 0.0


def step(watch):
    torch.manual_seed(0)
    policy = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2))
    opt = torch.optim.Adam(policy.parameters(), lr=1e-2)
    g = torch.Generator().manual_seed(1)
    states = torch.randn(8, 4, generator=g)
    torch.manual_seed(2)  # the sampled actions
    with watch(policy) as w:
        log_probs, rewards = [], []
        for s in states:  # one episode, one call per time step
            dist = Categorical(logits=policy(s))
            action = dist.sample()
            log_probs.append(dist.log_prob(action))
            rewards.append(reward(s, action))
        returns, future = [], 0.0
        for r in reversed(rewards):
            future = r + GAMMA * future
            returns.insert(0, future)
        returns = torch.tensor(returns)
        returns = (returns - returns.mean()) / (returns.std() + 1e-8)
        loss = -(torch.stack(log_probs) * returns).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return Run(w=w, policy=policy, rewards=rewards)


def truth(run):
    assert 0 < sum(run.rewards) < len(run.rewards)  # returns vary: the loss is not constant
    for p in run.policy.parameters():
        assert p.grad is not None and bool(torch.isfinite(p.grad).all())
        assert bool(p.grad.abs().sum() > 0)
