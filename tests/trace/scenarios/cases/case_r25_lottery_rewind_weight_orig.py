"""The control of ``lottery_rewind_into_pruned_weight_lost``: the same lottery-ticket round with
the rewind written into the parameter the pruned module keeps, ``m.weight_orig.copy_(init)``: the
forward pre-hook computes ``weight = weight_orig * weight_mask`` from it, so the retraining step
runs from the winning ticket ``m * theta_0``.  The pruned entries of ``weight_orig`` get
exactly-zero gradients (the mask, by design), every other gradient is finite and nonzero.

Source: https://deadneuron.com/notebooks/lottery-ticket-hypothesis/content.html ("Prune p% of the
parameters in theta_j, creating a mask m"; "Reset the remaining parameters to their values in
theta_0, creating the winning ticket f(x; m o theta_0)").  Adapted: the bug's network, data,
dense phase and pruning.
"""

import torch
from case_r25_lottery_rewind_into_pruned_weight_lost import _masks_and_grads
from case_r25_lottery_rewind_into_pruned_weight_lost import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://deadneuron.com/notebooks/lottery-ticket-hypothesis/content.html"
DESCRIPTION = "control: lottery rewind into weight_orig: the step runs from mask * theta_0"
ASK = []
MUST = [[HEALTHY_OK, r"prun\w*", r"\bmask\w*", r"lottery"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
    r"not (rewound|reset|restored)",
]


def step(watch):
    return _step(watch, rewind_orig=True)


def truth(run):
    _masks_and_grads(run)
    for k, mask in run.masks.items():
        assert torch.equal(run.used[k], run.init[k] * mask)
