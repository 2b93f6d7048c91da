"""Control: the same segmentation step with ``nn.CrossEntropyLoss(ignore_index=255)``: the void
pixels are left out of the loss and of the mean, every other pixel counts.  A healthy step.

Source: https://discuss.pytorch.org/t/segmentation-and-number-of-classes/149210 ("here we are
ignoring index 255").
"""

import math

from case_r10_seg_void_255_no_ignore_index import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://discuss.pytorch.org/t/segmentation-and-number-of-classes/149210"
DESCRIPTION = "control: segmentation, CrossEntropyLoss(ignore_index=255)"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"all-zero", r"every target[^\n]*ignore"]


def step(watch):
    return _step(watch, ignore=True)


def truth(run):
    assert run.error is None and math.isfinite(run.loss)
    assert bool((run.masks == 255).any()) and bool((run.masks != 255).any())
    assert all(p.grad is not None for p in run.model.parameters())
