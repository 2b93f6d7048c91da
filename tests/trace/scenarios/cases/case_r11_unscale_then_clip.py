"""Control: the same ``GradScaler`` loop with ``scaler.unscale_(optimizer)`` before
``clip_grad_norm_(model.parameters(), 1.0)``, as the AMP recipe says: the clip sees the true
gradients (norm about 0.84) and leaves them alone, ``scaler.step`` does not unscale them again,
and the optimizer applies the true gradient.

Source: https://github.com/milesial/Pytorch-UNet/pull/470 ("Unscale gradients before clipping":
"Gradients should be unscaled before clipping them").
"""

import torch
from case_r11_clip_before_unscale import norm
from case_r11_clip_before_unscale import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://github.com/milesial/Pytorch-UNet/pull/470"
DESCRIPTION = "control: scaler.unscale_ then clip_grad_norm_(1.0): the true gradient is applied"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"before[^\n]{0,40}unscal",
    r"not (yet )?unscaled",
    r"skipp",
]


def step(watch):
    return _step(watch, unscale_first=True)


def truth(run):
    assert norm(run.true) < 1.0
    assert all(torch.allclose(a, t, atol=1e-5) for a, t in zip(run.applied, run.true, strict=True))
