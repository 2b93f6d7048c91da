"""The control of ``quantile_huber_kappa_zero_nan``: the same QR-DQN step with the quantile Huber
loss at ``kappa = 1``, the value of the QR-DQN algorithm.  The pairwise errors with ``|u| <= 1`` are
penalised quadratically and the others linearly, each weighted by ``|tau_i - 1{u < 0}|``; the loss
is finite and every parameter of the quantile network gets a finite, nonzero gradient.

Source: https://html.scirp.org/file/_1-7900544_1.htm ("Algorithm 1 Quantile Regression Q Learning";
"Require: N, kappa"; "#Compute distributional Bellman target"; "#Compute quantile regression
loss").  Adapted: the bug's network, target network, transitions and optimizer with ``kappa = 1``.
"""

import math

import torch
from case_r27_quantile_huber_kappa_zero_nan import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://html.scirp.org/file/_1-7900544_1.htm"
DESCRIPTION = "control: QR-DQN quantile Huber loss with kappa = 1, finite gradients"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"all[- ]zero", r"\bzero grad\w*", r"\bdead\b"]


def step(watch):
    return _step(watch, kappa=1.0)


def truth(run):
    assert math.isfinite(run.loss) and run.loss > 0
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
