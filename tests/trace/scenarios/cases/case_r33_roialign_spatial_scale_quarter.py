"""The control of ``roialign_boxes_not_scaled_to_features``: the same mask branch with RoIAlign called
with ``spatial_scale=1 / 4``, the backbone's stride, so the boxes land on the 8 x 8 feature map and
the pooled features carry the image.  The mask loss is taken on each box's ground-truth class only,
as Mask R-CNN defines it; no box of this batch is of class 1, so the mask head's class-1 output
channel (its rows of the last convolution's weight and bias) gets exactly zero gradient, which is
intended.  Every other gradient is finite and nonzero.

Source: https://git.ete.moe/GitYCC/machine-learning-papers-summary/blob/master/cv/mask-rcnn.md ("To
fix the misalignment, we propose a simple, quantization-free layer, called RoIAlign, that faithfully
preserves exact spatial locations"; "For an RoI associated with ground-truth class k, L_mask is
only defined on the k-th mask (other mask outputs do not contribute to the loss)").  Adapted: the
bug's network, images, boxes and optimizer with the spatial scale.
"""

import torch
from case_r33_roialign_boxes_not_scaled_to_features import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://git.ete.moe/GitYCC/machine-learning-papers-summary/blob/master/cv/mask-rcnn.md"
DESCRIPTION = "healthy: RoIAlign with spatial_scale=1/4; class 1 absent, its mask channel gets 0"
ASK = []
MUST = [
    [
        HEALTHY_OK,
        r"class(es)? (1|one)[^\n]{0,80}(absent|no (box|instance|roi)|not in the batch|intended)",
        r"(channel|class)[^\n]{0,60}(ground[- ]truth|k-th|gt) (class|mask)",
    ]
]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"spatial_scale[^\n]{0,40}(missing|default|not (set|passed))",
]


def step(watch):
    return _step(watch, spatial_scale=0.25)


def truth(run):
    assert bool((run.pooled != 0).any())
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()), n
        if n.startswith("head.2."):
            assert bool(g[1].abs().sum() == 0), n  # class 1: no box in the batch
            assert bool((g[[0, 2]].reshape(2, -1).abs().sum(1) > 0).all()), n
        else:
            assert bool(g.abs().sum() > 0), n
