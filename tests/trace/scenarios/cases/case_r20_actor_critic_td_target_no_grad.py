"""Control: the page's one-step actor-critic as written: the next state's value ``v2`` under
``torch.no_grad()``, so the TD target is a constant for the critic's loss and the critic gets the TD
(semi-)gradient ``-2 delta dV(s)/dw``; the actor's loss uses ``delta.detach()``.  Every gradient is
finite and nonzero and equals the recipe's, taken at the start weights with ``autograd.grad``.

Source: https://www.kinetiqvision.com/learn/deep-reinforcement-learning/policy-gradients/actor-critic-architecture
("with torch.no_grad(): v2 = critic(obs2_t)", "actor_loss = -log_prob * delta.detach()",
"critic_loss = delta.pow(2)"; "δ_t is a one-step advantage estimate").  Adapted as the bug: actor
and critic in one module, 64 transitions, two Adam optimizers.
"""

import torch
from case_r20_actor_critic_td_target_not_detached import reference_grads
from case_r20_actor_critic_td_target_not_detached import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://www.kinetiqvision.com/learn/deep-reinforcement-learning/policy-gradients/"
    "actor-critic-architecture"
)
DESCRIPTION = "control: actor-critic with V(s') under no_grad and delta detached: TD gradient"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"\bdead\b", r"all[- ]zero"]


def step(watch):
    return _step(watch, detach_target=True)


def truth(run):
    assert not run.td_target.requires_grad  # a constant for the critic's loss
    ref = reference_grads(run)
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        assert torch.allclose(g, ref[n], atol=1e-6), n
