"""Control: the same regressor, epochs and ``ReduceLROnPlateau(factor=0.1, patience=2)`` fed the
validation loss in its default ``mode="min"``: the loss falls every epoch, each epoch is an
improvement, and the learning rate is still ``0.1`` at the watched step.  Every gradient is finite
and nonzero; the step moves every parameter by ``-0.1 * grad``.

Source: https://hasty.ai/docs/mp-wiki/scheduler/reducelronplateau ("If min is chosen, then the
learning rate is decayed once the monitored quantity stops decreasing by a certain minimum
threshold").
"""

from itertools import pairwise

import torch
from case_r14_plateau_mode_max_on_loss import BASE_LR
from case_r14_plateau_mode_max_on_loss import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://hasty.ai/docs/mp-wiki/scheduler/reducelronplateau"
DESCRIPTION = "control: ReduceLROnPlateau(mode='min') on the val loss: lr still 0.1, healthy"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"(learning rate|\blr\b)[^\n]{0,40}too (small|low)",
    r"no gradient",
    r"all-zero",
]


def step(watch):
    return _step(watch, mode="min")


def truth(run):
    assert all(b < a for a, b in pairwise(run.val_losses))
    assert run.lr == BASE_LR
    for gr, d in zip(run.grads, run.deltas, strict=True):
        assert bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0)
        assert torch.allclose(d, -BASE_LR * gr, atol=1e-7)
