"""Control: the same encoder, batch and warm-up on the fixed random triplets, then a step whose
triplets are mined in the batch ("batch hard": for each anchor its farthest positive and nearest
negative).  The mined triplets violate the margin for most anchors, the loss is positive and every
parameter gets a finite, nonzero gradient; the step moves the encoder.

Source: https://www.cruxible.dev/learn/ml55-triplet-loss ("Performance depends on mining
informative triplets: Hard negatives are negatives closer than the positive ... Choosing semi hard
triplets is a popular stable strategy made famous by FaceNet").  Adapted: batch-hard mining (the
hardest positive and negative of each anchor) rather than semi-hard.
"""

import torch
from case_r14_triplet_random_triplets_all_easy import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://www.cruxible.dev/learn/ml55-triplet-loss"
DESCRIPTION = "control: batch-hard mined triplets after the same warm-up: positive loss, healthy"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"all-zero", r"\bzero gradient", r"no gradient"]


def step(watch):
    return _step(watch, mining=True)


def truth(run):
    assert run.loss > 0
    for name, gr in run.grads.items():
        assert bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0), name
    assert run.moved
