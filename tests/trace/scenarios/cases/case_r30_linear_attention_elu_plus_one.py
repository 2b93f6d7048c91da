"""The control of ``linear_attention_relu_feature_map_zero_denominator``: the same causal linear
attention model, data and optimizer with the feature map ``phi(x) = elu(x) + 1``, positive
everywhere.  Every normaliser ``phi(q_i)^T z_i`` is positive, the outputs and the loss are finite,
and every parameter gets a finite, nonzero gradient.

Source: https://albanna-tutorials.com/torchcode/12_linear_attention.html ("Replace softmax with a
kernel feature map phi"; "Use phi(x) = elu(x) + 1 (ensures non-negative features)"; "Instead of
computing the S x S attention matrix, compute phi(K)^T V first (a D_k x D_v matrix), then multiply
by phi(Q)").  Adapted: the bug's causal model and data with this feature map.
"""

import math

import torch
from case_r30_linear_attention_relu_feature_map_zero_denominator import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK
from torch.nn import functional as F

SOURCE = "https://albanna-tutorials.com/torchcode/12_linear_attention.html"
DESCRIPTION = "control: causal linear attention with phi = elu + 1: positive normaliser, finite"
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
    return _step(watch, phi=lambda x: F.elu(x) + 1)


def truth(run):
    assert bool((run.den > 0).all())
    assert bool(torch.isfinite(run.out).all()) and math.isfinite(run.loss)
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
