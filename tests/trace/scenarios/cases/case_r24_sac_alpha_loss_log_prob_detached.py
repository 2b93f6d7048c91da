"""The control of ``sac_alpha_loss_log_prob_not_detached``: the same agent, states, noise and
critic, with the temperature loss written on ``log_pi.detach()``, ``-(log_alpha * (log_pi.detach()
+ target_entropy)).mean()``.  The sum of the two losses goes through one backward as before, but
the temperature loss now reaches ``log_alpha`` only: the policy's gradient is exactly the actor
loss's, and every gradient is finite and nonzero.

Source: https://www.eunsu.me/study/en/Reinforcement_Learning/14_Soft_Actor_Critic.html ("Learn
automatic temperature (alpha) tuning"; "Implement the SAC algorithm for continuous action
spaces").  Adapted: the bug's agent and data, ``log_pi`` detached in the temperature loss.
"""

import torch
from case_r24_sac_alpha_loss_log_prob_not_detached import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://www.eunsu.me/study/en/Reinforcement_Learning/14_Soft_Actor_Critic.html"
DESCRIPTION = "control: temperature loss on log_pi.detach(): the policy gets the actor loss only"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"not detached",
    r"requires_grad\s*(=|is|was)?\s*False",
]


def step(watch):
    return _step(watch, detach=True)


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    for n, g in run.wanted.items():
        assert torch.allclose(run.grads[n], g, atol=1e-7), n
