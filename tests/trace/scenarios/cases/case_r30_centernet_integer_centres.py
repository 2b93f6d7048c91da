"""The control of ``centernet_fractional_centres_no_positive``: the same heatmap network, images and
focal loss with each Gaussian drawn at the integer centre, ``int(c)``, as the reference
implementation does (``ct_int``).  Each object's peak pixel is exactly 1, ``N`` is the number of
objects, the loss is finite and every parameter gets a finite, nonzero gradient.

Source:
https://medium.com/visionwizard/centernet-objects-as-points-a-comprehensive-guide-2ed9993c48bc
("CenterNet: Objects as Points is interesting research which disrupts one of the hot topics of
Anchor Free Object Detection"; "I strongly urge you to go through the basics of Focal Loss before
reading this blog, as it will help you to doubtlessly acknowledge the algorithmic flow of loss
calculation used in this proposed method").  Adapted: the bug's network, images and loss with
rounded centres.
"""

import math

import torch
from case_r30_centernet_fractional_centres_no_positive import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://medium.com/visionwizard/centernet-objects-as-points-a-comprehensive-guide-2ed9993c48bc"
)
DESCRIPTION = "control: CenterNet Gaussians at integer centres: N keypoints > 0, finite focal loss"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"all[- ]zero",
    r"not in (the |any )?optimi[sz]er",
]


def step(watch):
    return _step(watch, round_centres=True)


def truth(run):
    assert float(run.target.max()) == 1 and run.num_pos >= 8
    assert math.isfinite(run.loss)
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
