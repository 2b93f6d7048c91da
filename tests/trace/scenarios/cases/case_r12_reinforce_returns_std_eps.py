"""Control: the same REINFORCE step with the returns standardised as PyTorch's actor-critic and
REINFORCE examples do, ``(returns - returns.mean()) / (returns.std() + eps)`` with ``eps`` the
float32 machine epsilon, on an episode that reached its goal (reward 1 on the last of its 12
steps, 0 before).  The discounted returns differ from step to step, the standardised returns are
finite, and every parameter of the policy gets a finite, nonzero gradient.  (With ``eps`` an
episode of zero rewards would give standardised returns of 0 and an all-zero gradient, not NaN.)

Source: https://discuss.pytorch.org/t/what-is-the-justification-for-normalizing-each-episodes-reward-targets-in-the-policy-gradient-examples/20494
("I'm confused about this line in the actor_critic.py example"; "normalizing reward values should
be done over batches or over all previous episodic rewards").
"""

import torch
from case_r12_reinforce_returns_std_zero import T
from case_r12_reinforce_returns_std_zero import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://discuss.pytorch.org/t/"
    "what-is-the-justification-for-normalizing-each-episodes-reward-targets-in-the-policy-gradient-examples/20494"
)
DESCRIPTION = "control: REINFORCE returns / (std + eps), rewarded episode: finite, trains"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, r"all-zero", r"no gradient", r"dead (units?|relu|neurons?)"]
EPS = torch.finfo(torch.float32).eps


def step(watch):
    return _step(watch, rewards=[0.0] * (T - 1) + [1.0], eps=EPS)


def truth(run):
    assert bool(torch.isfinite(run.returns).all()) and bool(run.returns.abs().sum() > 0)
    for n, gr in run.grads.items():
        assert bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0), n
    assert all(bool(torch.isfinite(p).all()) for p in run.params)
