"""The control of ``progan_fade_alpha_floor_division``: the same fade-in with ``alpha =
min(1, step / fade_steps)``, true division, 0.3 at step 30 of 100.  The new block's output enters
the image with weight 0.3 and the old path's with 0.7; every parameter, the new block and its
``to_rgb`` included, gets a finite, nonzero gradient.

Source: https://github.com/Chaklader/face_generation ("when a new layer is added, it is fadded in
smoothly"; "we take the output of the 16x16 layer and use nearest neighbor image resize to double
its resolution to 32x32. The same output will also be fed to the 32x32 layer. Then we calculate
the output of the network by doing a weighted sum of (1 - alpha) the upsampled 16x16 image and
alpha the 32x32 layer output").  Adapted: the bug's generator, critic, latents and optimizer.
"""

import torch
from case_r26_progan_fade_alpha_floor_division import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://github.com/Chaklader/face_generation"
DESCRIPTION = "control: ProGAN fade alpha = step / fade_steps = 0.3: new block trains"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"all[- ]zero", r"\bzero grad\w*", r"\bdead\b"]


def step(watch):
    return _step(watch, floor_division=False)


def truth(run):
    assert abs(run.alpha - 0.3) < 1e-12
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
