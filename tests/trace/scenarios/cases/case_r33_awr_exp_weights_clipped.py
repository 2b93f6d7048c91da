"""The control of ``awr_exp_weights_unclipped``: the same advantage-weighted regression step with the
exponentiated advantages clipped as in the paper, ``exp(A / beta).clamp(max=20)``.  Most of the
buffer's weights sit at the clip (its returns are far above the untrained value network), which is
intended; the policy and value losses and every gradient are finite and nonzero.  The advantages are
computed from the detached value, so the value network learns from its own regression only.

Source: https://paperium.net/article/en/3588/advantage-weighted-regression-simple-and-scalable-off-policy-reinforcementlearning
("They fix a Lagrange multiplier (β) instead of inner-loop dual updates and apply weight clipping to
keep regression weights numerically stable"; "the use of TD(λ) to obtain lower-variance targets for
the value fit").  Adapted: the bug's networks, buffer and optimizer with the weights clipped at 20.
"""

import math

import torch
from case_r33_awr_exp_weights_unclipped import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://paperium.net/article/en/3588/advantage-weighted-regression-simple-and-scalable-off-"
    "policy-reinforcementlearning"
)
DESCRIPTION = "control: AWR with exp(A / beta) clipped at 20"
ASK = []
MUST = [[HEALTHY_OK, r"(clip|clamp)\w*[^\n]{0,60}(intended|deliberate|by design|on purpose)"]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"\bdead\b"]


def step(watch):
    return _step(watch, clip=20.0)


def truth(run):
    assert bool((run.weights == 20.0).float().mean() > 0.5)
    assert math.isfinite(run.policy_loss) and math.isfinite(run.value_loss)
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert all(bool(torch.isfinite(p).all()) for p in run.after.values())
