"""The control of ``ciou_relu_box_sizes``: the same head and CIoU loss with the sizes decoded as
``exp`` of the raw outputs (always positive), an epsilon of 1e-7 in the divisions, and the trade-off
weight ``alpha`` computed under ``torch.no_grad()``, as common implementations do (it is a weight,
not differentiated).  The loss and every gradient of the head are finite and nonzero.

Source: https://grokipedia.com/page/CIoU_loss ("Complete Intersection over Union (CIoU) loss is a
bounding box regression loss function that extends the Distance IoU (DIoU) loss by incorporating an
additional penalty for aspect ratio consistency between predicted and ground truth bounding boxes";
"CIoU loss has been adopted as a bounding box regression loss in several prominent modern object
detectors, including YOLOv4 and YOLOv8").  Adapted: the bug's head, features, boxes and optimizer
with exponential sizes, the epsilon and ``alpha`` without gradient.
"""

import math

import torch
from case_r33_ciou_relu_box_sizes import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://grokipedia.com/page/CIoU_loss"
DESCRIPTION = "control: CIoU with exp box sizes, eps, alpha under no_grad"
ASK = []
MUST = [[HEALTHY_OK, r"(alpha|no_grad)[^\n]{0,80}(intended|deliberate|by design|trade-?off)"]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"\bdead\b"]


def step(watch):
    return _step(watch, exp_sizes=True)


def truth(run):
    assert bool((run.sizes > 0).all())
    assert math.isfinite(run.loss) and bool(torch.isfinite(run.per_box).all())
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
