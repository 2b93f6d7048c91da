"""One-step actor-critic whose TD target is computed with grad enabled: ``v2 = critic(obs2)`` is
not under ``torch.no_grad()``, so ``td_target = r + gamma * (1 - done) * v2`` carries a graph and
``critic_loss = (td_target - v) ** 2`` is differentiated through both critic calls.  The critic's
gradient is then the "residual" gradient ``2 delta (gamma dV(s')/dw - dV(s)/dw)``, not the TD
(semi-)gradient ``-2 delta dV(s)/dw`` of the recipe: the critic is also pulled to move its estimate
of the next state towards the current one.  The actor's loss uses ``delta.detach()`` and is right.
Every gradient is finite and nonzero; nothing raises.

Source: https://www.kinetiqvision.com/learn/deep-reinforcement-learning/policy-gradients/actor-critic-architecture
("# critic", "v = critic(obs_t)", "with torch.no_grad(): v2 = critic(obs2_t)", "td_target = ... +
gamma * (1.0 - done) * v2", "actor_loss = -log_prob * delta.detach()", "critic_loss =
delta.pow(2)").  Adapted: the page's step with the ``no_grad`` around ``v2`` left out; actor and
critic ``Linear(4, 32)``, ``Tanh``, ``Linear(32, .)`` held in one module, a batch of 64
transitions (losses averaged), two Adam optimizers at 1e-3.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn

SOURCE = (
    "https://www.kinetiqvision.com/learn/deep-reinforcement-learning/policy-gradients/"
    "actor-critic-architecture"
)
DESCRIPTION = "actor-critic: TD target's V(s') not under no_grad: critic gets the residual gradient"
ASK = []
MUST = [
    [
        r"target[^\n]{0,80}(detach\w*|no_grad|requires[_ ]grad|carr\w+ (a )?(gradient|graph))",
        r"(detach\w*|no_grad|stop[- ]gradient)[^\n]{0,80}target",
        r"bootstrap\w*",
        r"next[- _]?(state|obs\w*)",
        r"semi-?gradient",
        r"critic[^\n]{0,80}(twice|two (calls|passes|forwards)|both (calls|forwards))",
        r"obs2",
    ]
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE]
GAMMA = 0.99


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.actor = nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 2))
        self.critic = nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 1))


def data():
    g = torch.Generator().manual_seed(1)
    obs = torch.randn(64, 4, generator=g)
    obs2 = obs + 0.3 * torch.randn(64, 4, generator=g)
    reward = torch.randn(64, generator=g)
    done = (torch.rand(64, generator=g) < 0.1).float()
    return obs, obs2, reward, done


def step(watch, detach_target=False):
    torch.manual_seed(0)
    model = ActorCritic()
    start = {n: p.detach().clone() for n, p in model.named_parameters()}
    actor_opt = torch.optim.Adam(model.actor.parameters(), lr=1e-3)
    critic_opt = torch.optim.Adam(model.critic.parameters(), lr=1e-3)
    obs, obs2, reward, done = data()
    torch.manual_seed(2)  # the sampled actions
    with watch(model) as w:
        dist = torch.distributions.Categorical(logits=model.actor(obs))
        action = dist.sample()
        log_prob = dist.log_prob(action)
        v = model.critic(obs).squeeze(1)
        if detach_target:
            with torch.no_grad():
                v2 = model.critic(obs2).squeeze(1)
        else:
            v2 = model.critic(obs2).squeeze(1)
        td_target = reward + GAMMA * (1.0 - done) * v2
        delta = td_target - v
        actor_loss = (-log_prob * delta.detach()).mean()
        critic_loss = delta.pow(2).mean()
        actor_opt.zero_grad()
        actor_loss.backward()
        actor_opt.step()
        critic_opt.zero_grad()
        critic_loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        critic_opt.step()
    return Run(w=w, model=model, start=start, action=action, td_target=td_target, grads=grads,
               data=(obs, obs2, reward, done))  # fmt: skip


def reference_grads(run):
    """The recipe's gradients at the start weights: TD target under no_grad, delta detached."""
    ref = ActorCritic()
    ref.load_state_dict(run.start)
    obs, obs2, reward, done = run.data
    log_prob = torch.distributions.Categorical(logits=ref.actor(obs)).log_prob(run.action)
    v = ref.critic(obs).squeeze(1)
    with torch.no_grad():
        target = reward + GAMMA * (1.0 - done) * ref.critic(obs2).squeeze(1)
    delta = target - v
    actor = torch.autograd.grad((-log_prob * delta.detach()).mean(), list(ref.actor.parameters()))
    critic = torch.autograd.grad(delta.pow(2).mean(), list(ref.critic.parameters()))
    names = [f"actor.{n}" for n, _ in ref.actor.named_parameters()]
    names += [f"critic.{n}" for n, _ in ref.critic.named_parameters()]
    return dict(zip(names, actor + critic, strict=True))


def truth(run):
    assert run.td_target.requires_grad  # the target holds the critic's graph
    ref = reference_grads(run)
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        if n.startswith("actor."):
            assert torch.allclose(g, ref[n], atol=1e-6), n  # the actor's step is the recipe's
    differs = [
        n for n in ref if n.startswith("critic.") and not torch.allclose(run.grads[n], ref[n],
                                                                          atol=1e-5)
    ]  # fmt: skip
    assert len(differs) == 4  # every critic tensor: the residual gradient, not the TD gradient
