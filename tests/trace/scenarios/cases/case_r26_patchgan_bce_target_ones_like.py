"""The control of ``patchgan_bce_target_per_image_raises``: the same pix2pix generator step with
the adversarial target made as ``torch.ones_like(pred)``, one "real" label per patch of the
PatchGAN's ``(N, 1, 4, 4)`` map, plus lambda 100 times the L1 term.  Every generator gradient is
finite and nonzero and every generator parameter moves; the discriminator is frozen for this step
and is not watched.

Source: https://vitalab.github.io/article/2017/03/02/pix-2-pix.html ("The discriminator is a normal
CNN with a sigmoid activation layer at the end. It also uses LeakyReLU for every convolutional
layer. The input of the discriminator is both the label map and the generated image"; "Pix-2-Pix is
using the standard conditional GAN loss plus a regularisation term L1"; "lambda is a
hyperparameter (100 is suggested)").  Adapted: the bug's networks, data and optimizer.
"""

import torch
from case_r26_patchgan_bce_target_per_image_raises import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://vitalab.github.io/article/2017/03/02/pix-2-pix.html"
DESCRIPTION = "control: pix2pix BCE target ones_like the PatchGAN map, plus 100 * L1"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"target size",
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"\bdead\b",
]


def step(watch):
    return _step(watch, per_patch=True)


def truth(run):
    assert run.error is None and run.shape == (8, 1, 4, 4)
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        assert not torch.equal(run.gen.get_parameter(n).detach(), run.before[n]), n
