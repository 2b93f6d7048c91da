"""Control: the same actor-critic step with ``advantage = (R - V).detach()``: the policy term
trains the actor and the body, and the critic's gradient is exactly the one of its own loss
``0.5 * (R - V)^2``.

Source: https://medium.com/@awjuliani/hi-de66a5e3f147 (advantage "fed in separately", so that
its gradient does not change the value estimate).
"""

import torch
from case_r7_actor_critic_advantage_not_detached import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://medium.com/@awjuliani/hi-de66a5e3f147"
DESCRIPTION = "control: advantage detached: the critic's gradient is its own loss's only"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"not detached",
    r"should (be )?detach",
    r"carr(y|ies|ied) gradient",
]


def step(watch):
    return _step(watch, detach=True)


def truth(run):
    for n in ("critic.weight", "critic.bias"):
        assert torch.allclose(run.grads[n], run.expected[n], atol=1e-6), n
    assert float(run.grads["actor.weight"].abs().sum()) > 0
