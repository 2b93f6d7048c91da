"""Control: the same CLIP-style step with the bound kept the way OpenCLIP keeps it: the forward uses
``logit_scale.exp()`` as it is, and after ``optimizer.step()`` the parameter itself is clamped in
place under ``torch.no_grad()`` (``logit_scale.clamp_(0, log(100))``).  Starting from the same 4.8,
``logit_scale`` gets a finite, nonzero gradient (the loss's derivative with respect to it), and the
clamp after the step puts it back at log 100, from where later steps can move it down.  Every
gradient is finite and nonzero.

Source: https://vishalkumarr2.github.io/Learning_from_building_systems/llm-to-vla/weeks/week-09/day-60-clip-internals-siglip.html
("CLIP parameterizes it as τ = exp(log τ) where log τ is learnable, clamped to [-log 100, log
100]"; "Why learn it? - High τ → soft distribution ... - Low τ → sharp distribution").  Adapted as
the bug, with the clamp moved out of the forward to after the step.
"""

import torch
from case_r20_clip_logit_scale_clamped_in_forward import MAX_SCALE, unclamped_scale_grad
from case_r20_clip_logit_scale_clamped_in_forward import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://vishalkumarr2.github.io/Learning_from_building_systems/llm-to-vla/weeks/week-09/"
    "day-60-clip-internals-siglip.html"
)
DESCRIPTION = "control: CLIP logit_scale clamped in place after the step: it gets its gradient"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"all[- ]zero", r"\bzero grad\w*"]


def step(watch):
    return _step(watch, clamp_in_forward=False)


def truth(run):
    assert not run.model.clamp_in_forward
    g = run.grads["logit_scale"]
    assert float(g) != 0.0 and torch.allclose(g, unclamped_scale_grad(run), atol=1e-6)
    assert abs(float(run.model.logit_scale.detach()) - MAX_SCALE) < 1e-6  # clamped after the step
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
