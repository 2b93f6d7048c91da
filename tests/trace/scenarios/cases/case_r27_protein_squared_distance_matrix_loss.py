"""The control of ``protein_pairwise_distance_sqrt_diagonal_nan``: the same structure model trained
on squared distances, ``((x[:, :, None] - x[:, None]) ** 2).sum(-1)`` without a square root (scaled
by 1/100), as AlphaFold 3's distogram code compares squared distances with squared bin boundaries.
The diagonal's derivative is ``2 (x_i - x_i) = 0``, finite; every parameter gets a finite, nonzero
gradient.

Source: http://kler.cn/a/540087.html (AF3's ``distogram_loss``: ``boundaries = boundaries ** 2``;
``dists = torch.sum((pseudo_beta[..., :, None, :] - pseudo_beta[..., None, :, :]) ** 2, dim=-1,
keepdim=True)``).  Adapted: the bug's chains, model and optimizer with a mean squared error on the
squared distance matrices.
"""

import math

import torch
from case_r27_protein_pairwise_distance_sqrt_diagonal_nan import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "http://kler.cn/a/540087.html"
DESCRIPTION = "control: MSE on squared pairwise distances (no sqrt), finite gradients"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"all[- ]zero", r"\bzero grad\w*", r"\bdead\b"]


def step(watch):
    return _step(watch, squared=True)


def truth(run):
    assert math.isfinite(run.loss) and run.loss > 0
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
