"""REINFORCE on one episode with the mean return as baseline.  The log-probabilities are
``torch.cat`` of per-step ``(1,)`` tensors, shape ``(T,)``; the returns are
``torch.FloatTensor(returns).unsqueeze(1)``, shape ``(T, 1)``.  ``log_probs * ret_tensor``
broadcasts to ``(T, T)``, so the loss is ``-sum_i log_prob_i * sum_j advantage_j``, and with the
mean subtracted ``sum_j advantage_j`` is 0 up to rounding: the policy gradient is about 1e-7 of
the right one and the agent learns nothing, exactly as reported ("the loss is always very close to
zero when using the baseline").

Source: https://ai.stackexchange.com/questions/41279/reinforce-with-baseline-not-learning
("The agent will learn a good policy when I DO NOT use a baseline, but when I apply the baseline,
the agent fails to learn anything"; its code: ``ret_tensor = torch.FloatTensor(returns).unsqueeze(1)``,
``log_probs = torch.cat(self.log_probs)``, ``loss = - torch.sum(log_probs * ret_tensor)``).
"""

import copy

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn

SOURCE = "https://ai.stackexchange.com/questions/41279/reinforce-with-baseline-not-learning"
DESCRIPTION = "REINFORCE, log_probs (T,) * returns (T, 1): broadcast (T, T), mean baseline: grad ~0"
ASK = []
MUST = [[r"broadcast", r"\(20, ?20\)", r"\(20, ?1\)", r"shapes?\b"]]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE]

T = 20


def episode(policy, g):
    states = torch.randn(T, 4, generator=g)
    log_probs = []
    for t in range(T):
        dist = torch.distributions.Categorical(logits=policy(states[t : t + 1]))
        action = torch.multinomial(dist.probs.detach(), 1, generator=g).squeeze(1)
        log_probs.append(dist.log_prob(action))  # shape (1,)
    returns, gt = [0.0] * T, 0.0
    for t in reversed(range(T)):
        gt = 1.0 + 0.99 * gt
        returns[t] = gt
    return torch.cat(log_probs), torch.tensor(returns)


def grad_norm(model):
    return float(torch.cat([p.grad.flatten() for p in model.parameters()]).norm())


def step(watch, flat: bool = False):
    torch.manual_seed(0)
    policy = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 2))
    reference = copy.deepcopy(policy)
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
    with watch(policy) as w:
        log_probs, returns = episode(policy, torch.Generator().manual_seed(1))
        ret_tensor = returns if flat else returns.unsqueeze(1)
        ret_tensor = ret_tensor - ret_tensor.mean()  # the baseline
        product_shape = tuple((log_probs * ret_tensor).shape)
        loss = -torch.sum(log_probs * ret_tensor)
        optimizer.zero_grad()
        loss.backward()
        norm = grad_norm(policy)
        optimizer.step()
    # the intended loss on the same episode, plain torch
    log_probs, returns = episode(reference, torch.Generator().manual_seed(1))
    (-(log_probs * (returns - returns.mean())).sum()).backward()
    return Run(w=w, shape=product_shape, norm=norm, right_norm=grad_norm(reference))


def truth(run):
    assert run.shape == (T, T)
    assert run.right_norm > 0.1
    assert run.norm < 1e-4 * run.right_norm  # the baseline cancels the whole gradient
