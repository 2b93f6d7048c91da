"""The control of ``adain_std_no_eps_blank_content_nan``: the same AdaIN decoder step on the same
batch with the blank content image, the content statistics computed as ``sqrt(var + 1e-5)``.  The
blank image's normalised features are ``0 / sqrt(1e-5) = 0``, so its target is the style's
per-channel mean: every target and the loss are finite, and every decoder gradient is finite and
nonzero.

Source: https://packtpub.com/en-dk/product/hands-on-image-generation-with-tensorflow-9781838826789/chapter/chapter-5-style-transfer-7/section/arbitrary-style-transfer-in-real-time-ch07lvl1sec34
("AdaIN is also instance normalization, meaning that the mean and standard deviation are
calculated across (H, W) per image, and per channel, as opposed to batch normalization, which
calculates across (N, H, W)").  Adapted: the bug's networks, images and optimizer; the epsilon is
the one of the official AdaIN code (not in the stored excerpt).
"""

import math

import torch
from case_r26_adain_std_no_eps_blank_content_nan import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://packtpub.com/en-dk/product/hands-on-image-generation-with-tensorflow-9781838826789/"
    "chapter/chapter-5-style-transfer-7/section/arbitrary-style-transfer-in-real-time-ch07lvl1sec34"
)
DESCRIPTION = "control: AdaIN content std as sqrt(var + eps): blank image finite"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"all[- ]zero", r"\bzero grad\w*", r"\bdead\b"]


def step(watch):
    return _step(watch, eps=1e-5)


def truth(run):
    assert bool(torch.isfinite(run.t).all()) and math.isfinite(run.loss)
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
