"""The control of ``tv_loss_unnormalized_sum_dominates``: the same denoiser, images and optimizer,
with the total-variation term normalised as the page writes it (each direction's sum divided by
the number of differences, times 2, divided by the batch size) and weighted by ``lambda_tv =
0.01``.  The TV term is now a small fraction of the squared error and so is its gradient: after 40
steps the outputs keep the images' edges and are closer to the clean images than the noisy input.
Every gradient is finite and nonzero.

Source: https://www.codegenes.net/blog/pytorch-total-variation-loss (``count_h =
_tensor_size(img[:, :, 1:, :])``; ``return 2 * (h_tv / count_h + w_tv / count_w) / batch_size``;
"we can use a combination of Mean Squared Error (MSE) loss and TV loss"; ``lambda_tv = 0.01 #
Weight for TV loss``).  Adapted: the bug's ``Conv2d(1, 8, 3)``, ``Tanh``, ``Conv2d(8, 1, 3)``
denoiser, 16 blocky 16 x 16 images with noise of 0.2, Adam at 0.01, 40 steps before the watched
one.
"""

import torch
from case_r23_tv_loss_unnormalized_sum_dominates import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://www.codegenes.net/blog/pytorch-total-variation-loss"
DESCRIPTION = "control: TV normalised by counts and batch size, lambda 0.01: a small smoothing pull"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"\bdead\b",
    r"dominat\w*",
]
LAMBDA_TV = 0.01


def total_variation_loss(img):
    """The page's normalised function."""
    batch_size, h_x, w_x = img.size(0), img.size(2), img.size(3)
    count_h = img[:, :, 1:, :].numel() // batch_size
    count_w = img[:, :, :, 1:].numel() // batch_size
    h_tv = (img[:, :, 1:, :] - img[:, :, : h_x - 1, :]).pow(2).sum()
    w_tv = (img[:, :, :, 1:] - img[:, :, :, : w_x - 1]).pow(2).sum()
    return 2 * (h_tv / count_h + w_tv / count_w) / batch_size


def step(watch):
    return _step(watch, tv=lambda img: LAMBDA_TV * total_variation_loss(img))


def truth(run):
    data_norm, tv_norm, data_loss, tv_loss = run.parts
    assert tv_loss < 0.5 * data_loss and tv_norm < 0.5 * data_norm
    assert run.out_tv > 0.5 * run.clean_tv  # edges kept
    assert run.data_loss < run.noisy_mse  # it denoises
    for g in run.grads:
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
