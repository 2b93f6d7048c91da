"""The control of ``stylegan_pl_mean_ema_not_detached``: the same two lazy path-length
regularization steps with the running target updated in place under ``torch.no_grad()``
(``pl_mean.copy_(pl_mean.lerp(lengths.mean(), 0.01))``), a constant to each step's penalty as the
method says.  Both steps run; the buffer never requires grad; every gradient of both steps is
finite and nonzero.

Source: https://aicurious.io/glossary/path%20length%20regularization ("We can measure the
deviation from this ideal empirically by stepping into random directions in the image space and
observing the corresponding w gradients"; "The constant a is set dynamically during optimization
as the long-running exponential moving average of the lengths").  Adapted: the bug's generator,
latents and optimizer, with the moving average updated as StyleGAN2's code does it (``copy_``
without a graph).
"""

import torch
from case_r26_stylegan_pl_mean_ema_not_detached import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://aicurious.io/glossary/path%20length%20regularization"
DESCRIPTION = "control: PL reg with pl_mean EMA updated under no_grad: both steps run"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"\bdead\b",
    r"second time",
]


def step(watch):
    return _step(watch, detach=True)


def truth(run):
    assert run.error is None and len(run.done) == 2
    assert not run.model.pl_mean.requires_grad and float(run.model.pl_mean) > 0
    for grads in run.done:
        for n, g in grads.items():
            assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
