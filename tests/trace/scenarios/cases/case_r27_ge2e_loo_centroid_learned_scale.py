"""The control of ``ge2e_one_utterance_loo_centroid_nan``: the same GE2E step on 8 speakers with 4
utterances each (M = 4), as the paper's batches of N speakers times M utterances.  Every
leave-one-out centroid is the mean of the 3 other utterances, every similarity is finite, and the
encoder, the scale ``w`` and the bias ``b`` all get finite, nonzero gradients.

Source: https://huggingface.co/datasets/taesiri/arxiv_db/blob/3f4a5908e52a76b8bf96421e8aa5ecc1a733c17b/papers/1710/1710.10467.tex
(the GE2E paper's source, "Generalized End-to-End Loss for Speaker Verification": "the GE2E loss
function updates the network in a way that emphasizes examples that are difficult to verify at each
step of the training process").  Adapted: the bug's encoder, loss and optimizer with M = 4.
"""

import math

import torch
from case_r27_ge2e_one_utterance_loo_centroid_nan import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://huggingface.co/datasets/taesiri/arxiv_db/blob/"
    "3f4a5908e52a76b8bf96421e8aa5ecc1a733c17b/papers/1710/1710.10467.tex"
)
DESCRIPTION = "control: GE2E with M = 4 utterances, leave-one-out centroids of 3, finite grads"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"all[- ]zero", r"\bzero grad\w*", r"\bdead\b"]


def step(watch):
    return _step(watch, m=4)


def truth(run):
    assert run.m == 4
    assert bool(torch.isfinite(run.loo).all())
    assert math.isfinite(run.loss)
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
