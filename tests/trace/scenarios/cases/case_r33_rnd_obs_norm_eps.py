"""The control of ``rnd_obs_norm_without_eps``: the same random network distillation step with the
observation normalisation ``((s - mu) / (sigma + 1e-8)).clamp(-5, 5)``.  The constant border feature
normalises to exactly 0 and no longer carries anything, which is harmless; the intrinsic rewards,
the distillation loss and every gradient of the predictor are finite and nonzero.  The random target
is frozen (``requires_grad=False``), gets no gradient and is outside the optimizer by design: it is
never trained.

Source: http://www.webkkk.net/Komnenos1100/Nexus/blob/main/docs/01_reinforcement_learning/exploration/rnd.md
("RND normalizes observations and intrinsic rewards using running statistics: s_normalized = (s -
μ_s) / (σ_s + ε)"; "Fixed target network f: S → R^k (randomly initialized, never trained)"; "Only
θ_pred is updated").  Adapted: the bug's networks, observations and optimizer with the epsilon.
"""

import math

import torch
from case_r33_rnd_obs_norm_without_eps import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "http://www.webkkk.net/Komnenos1100/Nexus/blob/main/docs/01_reinforcement_learning/"
    "exploration/rnd.md"
)
DESCRIPTION = "healthy: RND with (s - mu) / (sigma + eps); frozen target outside the optimizer"
ASK = ["target.0.weight"]
MUST = [
    [HEALTHY_OK, r"(frozen|freez\w*|requires_grad)[^\n]{0,80}(intended|deliberate|by design)"],
]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"\bdead\b"]


def step(watch):
    return _step(watch, eps=1e-8)


def truth(run):
    assert bool(torch.isfinite(run.x).all()) and bool((run.x[:, 0] == 0).all())
    assert math.isfinite(run.loss) and bool(torch.isfinite(run.intrinsic).all())
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert all(g is None for g in run.target_grads)
