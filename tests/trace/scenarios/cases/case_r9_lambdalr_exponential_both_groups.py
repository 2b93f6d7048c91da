"""Control: the same two-group ``LambdaLR`` with the documentation's exponential factor
``0.95 ** epoch`` for both groups: at epoch 3 both learning rates are about 0.086 and every
parameter moves.

Source: https://deploy-preview-344--pytorch-hub-preview.netlify.app/docs/2.3/generated/torch.optim.lr_scheduler.lambdalr
(``lambda2 = lambda epoch: 0.95 ** epoch``).
"""

import torch
from case_r9_lambdalr_floor_div_group_zero import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://deploy-preview-344--pytorch-hub-preview.netlify.app/docs/2.3/generated/torch.optim.lr_scheduler.lambdalr"
DESCRIPTION = "control: LambdaLR 0.95 ** epoch on both groups: every parameter moves"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"learning rate (is |of |was )?0\b",
    r"changed none",
    r"did not (move|change)",
]


def step(watch):
    return _step(watch, both_decay=True)


def truth(run):
    assert all(lr > 0.08 for lr in run.lrs)
    for n in run.before:
        assert not torch.equal(run.before[n], run.after[n]), n
