"""The control of ``sds_gradient_through_denoiser``: the same score distillation step with the frozen
denoiser run under ``torch.no_grad()``, ``grad = w(t) (eps_pred - eps)`` a constant, and the
surrogate ``(grad * x).sum()`` whose gradient with respect to the rendered views is exactly ``grad``:
the scene gets the SDS gradient, the denoiser's Jacobian left out, as SDS prescribes.  The loss's
value means nothing (it is a surrogate); every parameter of the scene gets a finite, nonzero
gradient and the frozen denoiser none.

Source: https://lukoianov.com/sdi ("Proposed in DreamFusion and Score Jacobian Chaining, Score
Distillation is a method for generating 3D shapes using a pre-trained and frozen 2D diffusion model.
Initialize a differentiable 3D representation; Sample a random camera pose; Render a view of the
object; Add noise to the rendering; Denoise the image with the 2D diffusion model; Optimize the
parameters of the 3D representation to match the denoised image").  Adapted: the bug's scene,
denoiser, noise and optimizer with the denoiser under ``no_grad``.
"""

import torch
from case_r32_sds_gradient_through_denoiser import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://lukoianov.com/sdi"
DESCRIPTION = "control: SDS with the denoiser under no_grad, surrogate (grad * x).sum()"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"all[- ]zero",
    r"jacobian",
    r"not in (the |any )?optimi[sz]er",
]


def step(watch):
    return _step(watch, detached=True)


def truth(run):
    assert all(g is None for g in run.denoiser_grads)
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        assert torch.allclose(g, run.expected[n], rtol=1e-4, atol=1e-7), n
