"""The control of ``fixmatch_confident_mean_no_confident_nan``, and a healthy step that looks
idle: the same FixMatch step with the unlabelled term averaged over the whole unlabelled batch, as
the formula does (``1 / n_u`` times the sum of the masked cross-entropies).  No weak-view prediction
of the fresh model reaches the threshold 0.95, so the mask is all zero and the unlabelled term is
exactly 0: the strong view runs through the model and sends back exactly zero gradient.  Only the
supervised term trains this step, which is how FixMatch starts (pseudo-labels appear once the model
is confident); every parameter gets a finite, nonzero gradient and moves.

Source: https://www.onenoughtone.com/learn/consistency-regularization/5 ("The pseudo-labeling loss
is: L = 1/n_l sum l(f(x_i), y_i) + lambda 1/n_u sum 1[max(f(u_j)) >= tau] l(f(u_j), y^_j) where y^_j
= argmax f(u_j) is the pseudo-label and tau is the confidence threshold"; "confidence thresholding
and its critical role").  Adapted: the bug's data, views, model and optimizer, lambda = 1.
"""

import torch
from case_r28_fixmatch_confident_mean_no_confident_nan import THRESHOLD
from case_r28_fixmatch_confident_mean_no_confident_nan import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://www.onenoughtone.com/learn/consistency-regularization/5"
DESCRIPTION = "control: FixMatch masked CE averaged over all unlabelled: term 0, supervised trains"
ASK = []
MUST = [[HEALTHY_OK, r"threshold", r"confiden\w*", r"pseudo", r"unlabel\w*"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
]


def step(watch):
    return _step(watch, normalise="batch")


def truth(run):
    assert float(run.top.max()) < THRESHOLD and float(run.mask.sum()) == 0.0
    assert run.unsupervised == 0.0 and run.loss == run.supervised > 0
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    for n, p in run.model.named_parameters():
        assert bool(torch.isfinite(p).all()), n
