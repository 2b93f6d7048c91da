"""The control of ``mae_norm_pix_target_no_eps``: the same masked autoencoder on the same images
with MAE's normalized-pixel target as written in its code, ``(patch - mean) / (var + 1e-6).sqrt()``:
a blank patch's target is 0.  75% of the patches are masked per image by ``argsort`` of uniform
noise, the encoder sees the visible quarter, the decoder fills the rest with the mask token, and the
mean squared error counts the masked patches only.  The loss is finite; every parameter, the mask
token included, gets a finite, nonzero gradient.

Source: https://www.abdullahbinaqeel.xyz/ ("Mask 75% of an image's patches, ask a transformer to
reconstruct the rest — and you get representations that transfer. Here's how MAE works, built from
scratch"; "def random_masking(x, mask_ratio=0.75): N, L, D = x.shape; keep = int(L * (1 -
mask_ratio)); idx = torch.argsort(torch.rand(N, L), dim=1)").  Adapted: the bug's model, images and
optimizer with the epsilon.
"""

import math

import torch
from case_r29_mae_norm_pix_target_no_eps import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://www.abdullahbinaqeel.xyz/"
DESCRIPTION = "control: MAE, 75% random masking, norm_pix target with var + 1e-6: finite"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bdead\b",
    r"not in (the |any )?optimi[sz]er",
]


def step(watch):
    return _step(watch, eps=1e-6)


def truth(run):
    assert bool(run.blank.any()) and bool(torch.isfinite(run.target).all())
    assert bool((run.target[run.blank] == 0).all())
    assert math.isfinite(run.loss)
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
