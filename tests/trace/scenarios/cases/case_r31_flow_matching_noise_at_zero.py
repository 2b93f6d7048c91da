"""The control of ``flow_matching_data_at_zero``: the same flow-matching step with one convention
throughout, noise at ``t = 0`` and data at ``t = 1``: ``z_t = (1 - t) z0 + t x1`` and the target
``x1 - z0``, the path's own velocity.  Every parameter gets a finite, nonzero gradient.

Source: https://biechi.github.io/assets/img/blog/flow-matching-rl/flow_matching_primer.html ("Given
a noise sample $z_0$ and a target data point $x_1$, define a straight-line path: $$z(t) = (1-t)\\,
z_0 + t\\, x_1$$"; "The velocity along this path is simply: $$u(t \\mid z_0, x_1) = x_1 - z_0$$";
"Train the network to predict this velocity at the interpolated point").  Adapted: the bug's
network, data and optimizer with this path.
"""

import torch
from case_r31_flow_matching_data_at_zero import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK
from torch.nn import functional as F

SOURCE = "https://biechi.github.io/assets/img/blog/flow-matching-rl/flow_matching_primer.html"
DESCRIPTION = "control: flow matching z_t = (1 - t) z0 + t x1 with target x1 - z0"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"all[- ]zero",
    r"sign\w*[^\n]{0,40}(flip\w*|wrong|invert\w*|revers\w*)",
    r"not in (the |any )?optimi[sz]er",
]


def step(watch):
    return _step(watch, noise_at_zero=True)


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    cosine = F.cosine_similarity(run.target, run.velocity, dim=1)
    assert bool((cosine > 0.999).all())
