"""The control of ``pointnet_max_over_channels``, and a healthy step that looks broken: the same
PointNet with the global max taken over the points, ``features.max(dim=2)``.  The logits do not
change when the points are shuffled.  Only each feature's arg-max point (the "critical points")
passes gradient back to the input: here 61% of the points get an exactly-zero input
gradient, which is how max pooling works; every parameter gets a finite, nonzero gradient.

Source: https://willjhliang.github.io/notes/Deep-Learning/Computer-Vision/🎾-PointNet ("After
developing features per point, we take a global max pooling for each feature map"; "This max
pooling is permutation invariant"; "there exists a critical point set ... that defines the output of
our function").  Adapted: the bug's clouds, network and optimizer with the max over the points.
"""

import torch
from case_r27_pointnet_max_over_channels import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://willjhliang.github.io/notes/Deep-Learning/Computer-Vision/🎾-PointNet"
DESCRIPTION = "control: PointNet max over points, order-invariant; non-critical points get no grad"
ASK = []
MUST = [[HEALTHY_OK, r"critical"]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"all[- ]zero", r"\bdead\b", r"vanish\w*"]


def step(watch):
    return _step(watch, pool_dim=2)


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert run.gap < 1e-5
    silent = (run.point_grad.abs().sum(1) == 0).float().mean()
    assert 0.1 < float(silent) < 0.9
