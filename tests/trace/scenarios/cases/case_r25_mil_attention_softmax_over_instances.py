"""The control of ``mil_attention_softmax_singleton_dim``: the same attention-based MIL pooling
with the scores transposed to ``(1, K)`` before the softmax, as in Ilse et al.: the weights are
positive, sum to 1 over the bag's instances, and the bag embedding is their weighted mean.  The
attention network gets finite, nonzero gradients like the encoder and the classifier.

Source: https://ar5iv.labs.arxiv.org/html/2205.13750 ("It consists of an instance-level
classifier, a trainable MIL pooling operator based on spatial attention and a bag-level
classification layer").  Adapted: the bug's bags, network and optimizer; the pooling is Ilse et
al.'s (the stored page describes its own variant).
"""

import torch
from case_r25_mil_attention_softmax_singleton_dim import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://ar5iv.labs.arxiv.org/html/2205.13750"
DESCRIPTION = "control: MIL attention softmax over the bag's instances (transposed scores)"
ASK = []
MUST = [[HEALTHY_OK, r"attention", r"\bMIL\b", r"\bbag\b"]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"\bdead\b", r"all[- ]zero", r"\bzero grad\w*"]


def step(watch):
    return _step(watch, transpose=True)


def truth(run):
    for a in run.weights:
        assert a.shape == (1, 10) and bool((a > 0).all()) and bool((a < 1).all())
        assert abs(float(a.sum()) - 1) < 1e-5
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
