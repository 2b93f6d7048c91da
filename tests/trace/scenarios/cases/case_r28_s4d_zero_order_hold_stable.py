"""The control of ``s4d_forward_euler_discretization_diverges``: the same diagonal state space
layer discretized by the zero-order hold, ``A_bar = exp(dt A)`` and ``B_bar = (A_bar - 1) / A *
B``, which maps every stable continuous mode (``A_n < 0``) to a discrete factor in (0, 1) whatever
the step ``dt``.  The convolution kernel decays, the output and the loss are finite and every
parameter (the encoder, ``A``, ``dt``, ``B``, ``C``, ``D`` and the decoder) gets a finite, nonzero
gradient.

Source: https://scipedia.bohrium.com/en/sciencepedia/feynman/control_theory_graduate-discretization_of_continuous-time_state-space_models
("This procedure commonly employs the Zero-Order Hold method for exact representation at sampling
instants or the Tustin transform to preserve stability in stiff systems"; "It serves as a critical
link for implementing classical control concepts in modern applications such as Kalman filtering
and neural state-space models").  Adapted: the bug's layer, model, data and optimizer with the
zero-order hold.
"""

import math

import torch
from case_r28_s4d_forward_euler_discretization_diverges import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://scipedia.bohrium.com/en/sciencepedia/feynman/"
    "control_theory_graduate-discretization_of_continuous-time_state-space_models"
)
DESCRIPTION = "control: S4D layer discretized by zero-order hold exp(dt A): factors in (0, 1)"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"explod\w*", r"diverg\w*", r"all[- ]zero"]


def step(watch):
    return _step(watch, method="zoh")


def truth(run):
    assert float(run.a_bar.min()) > 0 and float(run.a_bar.max()) < 1
    assert bool(torch.isfinite(run.out).all()) and math.isfinite(run.loss)
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
