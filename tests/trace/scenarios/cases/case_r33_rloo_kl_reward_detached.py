"""The control of ``rloo_kl_reward_not_detached``: the same RLOO step with the KL anchor's value
taken out of the graph, ``reward = score - beta * (logp - logp_ref).detach()``, so the leave-one-out
advantage is a constant and the loss ``-(A * logp).mean()`` gives the REINFORCE gradient with the
leave-one-out baseline.  On this first step the policy equals its frozen reference, so every KL term
is 0.  Every gradient is finite and nonzero and equals the one computed with the reward held
constant.  The reference policy is a frozen copy outside the optimizer, by design.

Source: https://ivis4ml.github.io/flux/algorithms/rloo ("RLOO uses the average reward of other
samples in the same group as the baseline, reducing variance without requiring a value function";
"A_i = r_i - \\frac{1}{n-1} \\sum_{j \\neq i} r_j"; "Unbiased: Unlike mean baseline, LOO is
unbiased").  Adapted: the bug's policy, rollouts and optimizer with the reward detached.
"""

import torch
from case_r33_rloo_kl_reward_not_detached import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://ivis4ml.github.io/flux/algorithms/rloo"
DESCRIPTION = "control: RLOO with the KL-penalised reward detached before the baseline"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"not detached|without (a )?detach|missing (a )?detach",
]


def step(watch):
    return _step(watch, detach=True)


def truth(run):
    assert torch.equal(run.reward, run.score)
    for g, e in zip(run.grads, run.expected, strict=True):
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
        assert torch.allclose(g, e, rtol=1e-5, atol=1e-7)
