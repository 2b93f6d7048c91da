"""The control of ``inpainting_mask_inverted_hole_visible``: the same inpainting step with the mask
in the convention the code expects, ``m = 1 - hole`` (1 on known pixels).  The input keeps the
known pixels and zeroes the hole, the hole term (weight 6) covers exactly the pixels the network
must invent and the valid term (weight 1) the pixels it is shown.  Every parameter gets a finite,
nonzero gradient.

Source: https://deepwiki.com/jingyuanli001/RFR-Inpainting/3.4-loss-functions ("def l1_loss(self, f1,
f2, mask = 1): return torch.mean(torch.abs(f1 - f2)*mask)"; "The hole loss is weighted more heavily
(6x) than the valid loss (1x) to prioritize filling in the missing regions correctly").  Adapted:
the bug's images, holes, network and optimizer with the mask in the known = 1 convention.
"""

import torch
from case_r27_inpainting_mask_inverted_hole_visible import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://deepwiki.com/jingyuanli001/RFR-Inpainting/3.4-loss-functions"
DESCRIPTION = "control: inpainting mask 1 = known, hole zeroed in the input, hole L1 weighted 6"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"\bdead\b",
    r"leak\w*",
    r"invert\w*",
]


def step(watch):
    return _step(watch, invert_file_mask=True)


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    hole = run.hole.expand_as(run.images).bool()
    assert bool((run.corrupt[hole] == 0).all())
    assert torch.equal(run.corrupt[~hole], run.images[~hole])
    assert torch.equal((1 - run.m).bool().expand_as(hole), hole)
