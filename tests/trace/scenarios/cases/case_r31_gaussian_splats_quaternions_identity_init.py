"""The control of ``gaussian_splats_quaternions_zero_init``: the same Gaussian-splatting fit with
the quaternions initialised to the identity rotation ``(1, 0, 0, 0)``, as the 3D Gaussian Splatting
code does, then normalised in the forward.  The rotations, covariances, densities and loss are
finite, and every parameter gets a finite, nonzero gradient (the scales start anisotropic, so the
rotations matter; the quaternions' ``w`` components get exactly 0, the radial direction the
normalisation removes at ``(1, 0, 0, 0)``, their ``x``, ``y``, ``z`` components a gradient).

Source: https://www.realtime-avatars.com/learn/gaussian-splatting/concepts/covariance-matrix
("instead of storing the covariance matrix directly (which would be complex to optimize), 3DGS
stores two simpler things: 1. Scale (S): Three numbers saying how much to stretch in each direction
(x, y, z) 2.  Rotation (R): A quaternion (4 numbers) saying which way to point the stretch"; "The
covariance matrix is then computed as: Σ = R · S · Sᵀ · Rᵀ"; "The result is always a valid (positive
semi-definite) covariance matrix").  Adapted: the bug's scene, model and optimizer with identity
quaternions.
"""

import math

import torch
from case_r31_gaussian_splats_quaternions_zero_init import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://www.realtime-avatars.com/learn/gaussian-splatting/concepts/covariance-matrix"
DESCRIPTION = "control: splatting quaternions initialised to (1, 0, 0, 0), normalised: finite"
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
    return _step(watch, identity_rotations=True)


def truth(run):
    assert bool(torch.isfinite(run.rendered).all()) and math.isfinite(run.loss)
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert bool((run.grads["quats"][:, 0] == 0).all())
    assert bool((run.grads["quats"][:, 1:].abs().sum(1) > 0).all())
    for n, p in run.model.named_parameters():
        assert bool(torch.isfinite(p).all()), n
