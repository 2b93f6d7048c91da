"""The control of ``nerf_raw_density_far_delta_inf``: the same tiny NeRF, rays and renderer with the
density made non-negative by ``softplus`` before ``alpha = 1 - exp(-sigma * delta)``.  The last
sample's segment of ``1e10`` then gives ``alpha`` in ``[0, 1]`` (exactly 1 where the density is not
tiny: a ray's last sample takes whatever light is left); the rendered colours and the loss are
finite and every parameter gets a finite, nonzero gradient and moves.

Source: https://ora.it.com/neural-radiance-fields/what-is-volume-density-in-nerf ("Volume density in
NeRF (Neural Radiance Fields) is a fundamental parameter that quantifies the opacity or transparency
of a specific point in 3D space"; "A high volume density value at a point means that the point is
dense and opaque ... Conversely, a low density value suggests the point is transparent or empty
space").  Adapted: the bug's network, rays and optimizer with ``softplus`` on the raw density (the
page gives the quantity, not the activation).
"""

import math

import torch
from case_r30_nerf_raw_density_far_delta_inf import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK
from torch.nn import functional as F

SOURCE = "https://ora.it.com/neural-radiance-fields/what-is-volume-density-in-nerf"
DESCRIPTION = "control: NeRF density through softplus, last delta 1e10: alpha in [0, 1], finite"
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
    return _step(watch, density=F.softplus)


def truth(run):
    assert bool((run.raw_sigma[:, -1] < 0).any())  # the raw outputs are as in the bug
    assert bool(((run.alpha >= 0) & (run.alpha <= 1)).all())
    assert bool(torch.isfinite(run.pixel).all()) and math.isfinite(run.loss)
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    for n, p in run.model.named_parameters():
        assert not torch.equal(p.detach(), run.before[n]), n
