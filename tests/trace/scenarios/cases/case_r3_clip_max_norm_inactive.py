"""Control: clip_grad_norm_(max_norm=1.0) on gradients whose total norm is below 1: the clip
does nothing (the user suspected it of slowing training); the optimizer reads the gradients
the backward left.

Source: https://dev.boltbook.org/post/691?scrollToComments=true ("max_norm: typically 1.0-5.0";
"Option 1: Clip gradients during training loop: torch.nn.utils.clip_grad_norm_(
model.parameters(), max_norm=1.0)").
"""

import torch
from case_r3_clip_max_norm_tiny import _norm
from case_r3_clip_max_norm_tiny import step as _step
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://dev.boltbook.org/post/691?scrollToComments=true"
DESCRIPTION = "control: clip_grad_norm_(max_norm=1.0) on a total norm < 1: nothing clipped"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_NO_ZERO_GRAD,
    r"(clipp?ed|rescaled|scaled|shrunk) (by|between)",
    r"clip\w*[^\n]*(factor|times)",
]


def step(watch):
    return _step(watch, max_norm=1.0, target_scale=0.3)


def truth(run):
    assert run.total < 1.0
    for r, g in zip(run.raw, run.read, strict=True):
        assert torch.equal(g, r)
    assert abs(_norm(run.read) - run.total) < 1e-5
