"""REINFORCE on one episode with the returns standardised as Karpathy's policy-gradient code does,
``(returns - returns.mean()) / returns.std()`` with no epsilon, on an episode of a sparse-reward
task that earned nothing: all 12 rewards are 0, so all returns are 0, their standard deviation is
0 and the standardised returns are ``0 / 0 = NaN``.  The loss ``-(log_prob * returns).sum()`` is
NaN, every parameter of the policy gets an all-NaN gradient, and Adam's step writes NaN into every
weight.  The NaN is made outside the model, in the returns the loss multiplies the log-probabilities
by.

Source: https://datascience.stackexchange.com/questions/20098/why-do-we-normalize-the-discounted-rewards-when-doing-policy-gradient-reinforcem
("discounted_epr = discount_rewards(epr); discounted_epr -= np.mean(discounted_epr);
discounted_epr /= np.std(discounted_epr)"; "I saw a common practice to normalize advantages in
between episodes in several implementations").  Adapted: torch, a synthetic episode (random
states, actions sampled from the policy), all rewards 0.
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn

SOURCE = (
    "https://datascience.stackexchange.com/questions/20098/"
    "why-do-we-normalize-the-discounted-rewards-when-doing-policy-gradient-reinforcem"
)
DESCRIPTION = "REINFORCE returns / returns.std(), all-zero rewards: 0/0 NaN, NaN gradients"
ASK = []
MUST = [
    [r"\bnan\b", r"non-?finite"],
    [
        r"\bstd\b",
        r"standard deviation",
        r"standardi[sz]",
        r"normali[sz]",
        r"0 ?/ ?0",
        r"divi\w* by (zero|0)",
        r"\breturns?\b",
    ],
]
MUST_NOT = [
    FALSE_OK,
    r"dead (units?|relu|neurons?)",
    r"explod",
    r"learning rate (is |was )?too (high|large)",
]
GAMMA, T = 0.99, 12


def step(watch, rewards=None, eps: float | None = None):
    rewards = rewards if rewards is not None else [0.0] * T
    torch.manual_seed(0)
    policy = nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 2))
    opt = torch.optim.Adam(policy.parameters(), lr=1e-2)
    g = torch.Generator().manual_seed(1)
    states = torch.randn(T, 4, generator=g)
    with watch(policy) as w:
        opt.zero_grad()
        probs = torch.softmax(policy(states), dim=-1)
        actions = torch.multinomial(probs.detach(), 1, generator=g).squeeze(1)
        log_probs = torch.log(probs.gather(1, actions[:, None]).squeeze(1))
        returns, running = [], 0.0
        for r in reversed(rewards):
            running = r + GAMMA * running
            returns.insert(0, running)
        returns = torch.tensor(returns)
        if eps is None:
            returns = (returns - returns.mean()) / returns.std()
        else:
            returns = (returns - returns.mean()) / (returns.std() + eps)
        loss = -(log_probs * returns).sum()
        loss.backward()
        opt.step()
    grads = {n: p.grad.detach().clone() for n, p in policy.named_parameters()}
    params = [p.detach().clone() for p in policy.parameters()]
    return Run(w=w, returns=returns, loss=loss.item(), grads=grads, params=params)


def truth(run):
    assert bool(torch.isnan(run.returns).all())
    assert run.loss != run.loss
    for n, gr in run.grads.items():
        assert bool(torch.isnan(gr).all()), n
    assert all(bool(torch.isnan(p).all()) for p in run.params)
