"""Behaviour cloning of a continuous-action expert with a Gaussian policy, trained by maximising
the probability density of the expert's actions rather than its log, ``loss =
-policy(obs).log_prob(a).sum(-1).exp().mean()``, on actions left in their raw units (torques
between about 20 and 100, not normalised).  The policy starts with means near 0 and standard
deviations 1, so each log-density is about -2000 and ``exp`` of it underflows to exactly 0 in
float32: the loss is exactly 0 and the backward of ``exp`` multiplies every incoming gradient by
that 0.  Every parameter gets an exactly-zero gradient (not ``None``) and nothing moves; nothing is
NaN or infinite and nothing raises.

Source: https://stevengong.co/notes/Behavior-Cloning ("What happens if we drop the log?"; "If you
maximize the raw probability, it can lead to weird behaviors"; "Maximizing just means: make the
model put high probability on the demonstrated (expert) actions").  Adapted: an expert mapping
8-dimensional observations to 2 torques (``50 + 30 tanh`` of a random linear map), 256 pairs; a
``Linear(8, 64), Tanh, Linear(64, 64), Tanh, Linear(64, 2)`` mean network with a state-independent
``log_std`` parameter at 0; Adam at 1e-3.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.distributions import Normal

SOURCE = "https://stevengong.co/notes/Behavior-Cloning"
DESCRIPTION = "BC maximises exp(log_prob) of raw-unit actions: density underflows to 0, zero grad"
ASK = ["log_std"]
MUST = [
    [
        r"underflow\w*",
        r"\bexp\b",
        r"exp\(",
        r"log[_ ]?prob",
        r"(raw |the )?(probabilit\w*|densit\w*|likelihood)",
        r"(without|drop\w*|not) (the |a )?log",
        r"unnormali[sz]ed|not normali[sz]ed|normali[sz]\w* (the )?actions?",
    ],
    [r"\bzero\b", r"no gradient", r"\b0\.0\b"],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"\bdead\b",
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
]


class GaussianPolicy(nn.Module):
    def __init__(self):
        super().__init__()
        self.mean = nn.Sequential(
            nn.Linear(8, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 2)
        )
        self.log_std = nn.Parameter(torch.zeros(2))

    def forward(self, obs):
        return Normal(self.mean(obs), self.log_std.exp())


def demonstrations():
    g = torch.Generator().manual_seed(1)
    obs = torch.randn(256, 8, generator=g)
    actions = 50 + 30 * torch.tanh(obs @ torch.randn(8, 2, generator=g))  # raw torques
    return obs, actions


def step(watch, log_likelihood=False, normalise=False):
    torch.manual_seed(0)
    policy = GaussianPolicy()
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)
    obs, actions = demonstrations()
    if normalise:
        actions = (actions - actions.mean(0)) / actions.std(0)
    before = {n: p.detach().clone() for n, p in policy.named_parameters()}
    with watch(policy) as w:
        optimizer.zero_grad()
        log_prob = policy(obs).log_prob(actions).sum(-1)
        loss = -log_prob.mean() if log_likelihood else -log_prob.exp().mean()
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in policy.named_parameters()}
        optimizer.step()
    return Run(
        w=w,
        policy=policy,
        before=before,
        grads=grads,
        actions=actions,
        loss=float(loss.detach()),
        log_prob=log_prob.detach(),
    )


def truth(run):
    assert float(run.actions.min()) > 15  # raw units, far from the initial means
    assert float(run.log_prob.max()) < -200  # each density underflows
    assert run.loss == 0.0
    for n, p in run.policy.named_parameters():
        g = run.grads[n]
        assert bool(torch.isfinite(g).all()) and bool((g == 0).all()), n
        assert torch.equal(p.detach(), run.before[n]), n
