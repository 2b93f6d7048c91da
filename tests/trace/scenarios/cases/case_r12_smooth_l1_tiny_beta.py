"""Control: the same regressor with ``nn.SmoothL1Loss(beta=1e-3)``: its linear part has slope 1
whatever ``beta`` is, so with every residual above 1e-3 the loss is L1 up to ``beta / 2`` and the
gradient with respect to each prediction is ``sign(r) / N``.  Finite, nonzero, of the size an L1
loss gives; the network trains.

Source: https://www.howistudyai.com/concepts/9c718fab-fd5e-4585-b6bb-aa022863533a ("A threshold
parameter controls the switch between quadratic and linear regimes: delta for Huber and beta for
Smooth L1"; "Gradients from Huber/Smooth L1 are bounded for large errors, preventing outliers
from dominating parameter updates").
"""

import torch
from case_r12_huber_tiny_delta import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK
from torch import nn

SOURCE = "https://www.howistudyai.com/concepts/9c718fab-fd5e-4585-b6bb-aa022863533a"
DESCRIPTION = "control: SmoothL1Loss(beta=1e-3): slope 1, L1-sized gradients, healthy"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, r"vanish", r"all-zero", r"\btiny\b", r"\bdelta\b"]


def step(watch):
    return _step(watch, loss_fn=nn.SmoothL1Loss(beta=1e-3))


def truth(run):
    for og, r in zip(run.out_grads, run.residuals, strict=True):
        assert bool((r.abs() > 1e-3).all())
        assert torch.allclose(og, torch.sign(r) / r.numel(), rtol=1e-5, atol=0)
    assert run.losses[0] > 0.5 * run.residuals[0].abs().mean().item()
