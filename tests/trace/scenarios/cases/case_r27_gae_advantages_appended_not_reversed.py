"""Generalised advantage estimation computed by walking the rollout backwards, ``A_t = delta_t +
gamma lambda A_{t+1}``, appending each ``A_t`` to a list and turning the list into a tensor without
reversing it: ``advantages[0]`` holds ``A_{T-1}``, ``advantages[1]`` holds ``A_{T-2}`` and so on.
Each action's log-probability is weighted by the advantage of the mirrored time step, and the critic
regresses on returns built from the same misaligned advantages.  Everything is finite and every
parameter gets a nonzero gradient; each action is weighted by another step's advantage (here all 32
advantages are off by more than 0.1: the first steps, worth about 17, get the last steps' 3 to 8).

Source: https://torchedup.dev/problems/gae-advantage ("Implement GAE-lambda for a single trajectory.
Given per-step rewards and value estimates, walk backward and compute exponentially-weighted
advantages"; "Recursion (walk t = T-1 down to 0)"; "Return a list of T floats").  Adapted: a 32-step
rollout of an actor-critic (``Linear(4, 32), Tanh`` bodies, 2 actions) on random observations, the
reward 1 when the action matches the sign of the first observation plus a slow ramp, gamma 0.99,
lambda 0.95, the episode ending at the last step; the advantages appended in the backward loop and
never reversed; Adam at 3e-4 on the policy loss plus half the value loss.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn

SOURCE = "https://torchedup.dev/problems/gae-advantage"
DESCRIPTION = "GAE appended in the backward loop and not reversed: advantage t is A_(T-1-t)"
ASK = []
MUST = [
    [r"advantage\w*", r"\bGAE\b", r"returns?"],
    [
        r"revers\w*",
        r"\bflip\w*",
        r"backwards?",
        r"\border\b",
        r"misalign\w*",
        r"mirror\w*",
        r"wrong (time ?)?steps?",
        r"time ?steps?[^\n]{0,60}(swapped|mismatch\w*|shifted|wrong)",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b", r"requires_grad\s*(=|is|was)?\s*False"]
T, GAMMA, LAM = 32, 0.99, 0.95


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.actor = nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 2))
        self.critic = nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 1))


def rollout(model):
    g = torch.Generator().manual_seed(1)
    obs = torch.randn(T, 4, generator=g)
    with torch.no_grad():
        probs = model.actor(obs).softmax(-1)
        actions = torch.multinomial(probs, 1, generator=g).squeeze(1)
        values = model.critic(obs).squeeze(1)
    rewards = (actions == (obs[:, 0] > 0).long()).float() + torch.linspace(0, 2, T)
    return obs, actions, rewards, values


def gae_reference(rewards, values):
    """A_t = sum_l (gamma lambda)^l delta_(t+l), the episode ending after step T-1."""
    next_values = torch.cat([values[1:], torch.zeros(1)])
    delta = rewards + GAMMA * next_values - values
    t = torch.arange(T)
    weights = (GAMMA * LAM) ** (t[None, :] - t[:, None]).clamp(min=0).float()
    return (weights * (t[None, :] >= t[:, None]) * delta[None, :]).sum(1)


def gae_appended(rewards, values):
    advantages, last = [], 0.0
    for t in reversed(range(T)):
        next_value = values[t + 1] if t + 1 < T else 0.0
        delta = rewards[t] + GAMMA * next_value - values[t]
        last = delta + GAMMA * LAM * last
        advantages.append(float(last))
    return torch.tensor(advantages)  # never reversed


def gae_indexed(rewards, values):
    advantages, last = torch.zeros(T), 0.0
    for t in reversed(range(T)):
        next_value = values[t + 1] if t + 1 < T else 0.0
        delta = rewards[t] + GAMMA * next_value - values[t]
        last = delta + GAMMA * LAM * last
        advantages[t] = last
    return advantages


def step(watch, gae=gae_appended):
    torch.manual_seed(0)
    model = ActorCritic()
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-4)
    obs, actions, rewards, values = rollout(model)
    advantages = gae(rewards, values)
    returns = advantages + values
    with watch(model) as w:
        optimizer.zero_grad()
        log_prob = model.actor(obs).log_softmax(-1).gather(1, actions[:, None]).squeeze(1)
        policy_loss = -(log_prob * advantages).mean()
        value_loss = (returns - model.critic(obs).squeeze(1)).pow(2).mean()
        (policy_loss + 0.5 * value_loss).backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, advantages=advantages, reference=gae_reference(rewards, values), grads=grads)


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert torch.allclose(run.advantages, run.reference.flip(0), atol=1e-4)
    off = (run.advantages - run.reference).abs() > 0.1
    assert int(off.sum()) >= T // 2
