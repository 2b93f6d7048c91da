"""Control: the same CTC batch with ``nn.CTCLoss(zero_infinity=True)``: the impossible sample's
infinite loss and its gradient are set to zero, the other three samples train, and every
gradient is finite and nonzero.

Source: https://github.com/open-mmlab/mmocr/pull/159 (the fix, ``zero_infinity=True``; the CTCLoss
documentation: "Infinite losses mainly occur when the inputs are too short to be aligned to the
targets").
"""

import torch
from case_r7_ctc_impossible_target_nan import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://github.com/open-mmlab/mmocr/pull/159"
DESCRIPTION = "control: the same CTC batch with zero_infinity=True: finite loss and gradients"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE]


def step(watch):
    return _step(watch, zero_infinity=True)


def truth(run):
    assert run.per_sample[0] == float("inf")  # the sample is still impossible ...
    assert run.loss == run.loss and abs(run.loss) != float("inf")  # ... its loss zeroed
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    for p in run.model.parameters():
        assert bool(torch.isfinite(p).all())
