"""Control: the same phase model where the silent frames are exactly zero, so the thread's nudge
(1e-7 added where the denominator is 0) applies: atan2's backward is finite, the silent frames'
phase matches its target 0 and adds nothing, and every parameter gets a finite, nonzero gradient.

Source: https://discuss.pytorch.org/t/how-to-avoid-nan-output-from-atan2-during-backward-pass/176890
(the reply: "Your approach sounds valid and also works in this minimal code snippet", with
``denominator[0, 0] = 0.``, the same nudge and ``out.mean().backward()``).
"""

import torch
from case_r5_atan2_tiny_frames_nan import step as _step
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://discuss.pytorch.org/t/how-to-avoid-nan-output-from-atan2-during-backward-pass/176890"
)
DESCRIPTION = "control: silent frames exactly zero, nudged denominator: finite gradients"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_NO_ZERO_GRAD, r"no gradient"]


def step(watch):
    return _step(watch, silence=0.0)


def truth(run):
    assert bool(torch.isfinite(run.loss))
    for grad in run.grads:
        assert bool(torch.isfinite(grad).all()) and bool(grad.abs().sum() > 0)
