"""The control of ``dkl_log_det_underflow``: the same deep kernel GP with the negative log marginal
likelihood computed from the Cholesky factor ``L`` of ``K``: ``log|K| = 2 sum log diag(L)`` (about
-135 here, where ``det(K)`` itself is 0 in float32) and ``K^-1 y`` by ``cholesky_solve``.  The loss
is finite and every parameter, the feature network's weights and the kernel's three
hyperparameters, gets a finite, nonzero gradient.

Source: https://hackmd.io/@NLM/SJUL8LQAF ("Deep Kernel Learning combines the representational
power of neural networks with the reliable uncertainty estimates of Gaussian processed by learning a
flexible deep kernel function"; "maps the inputs to intermediate values through a neural network
parameterized by weights and biases"; "These intermediate values are then used as inputs to the
standard kernel").  Adapted: the bug's model, data and optimizer with the Cholesky form of the
likelihood, as GP libraries compute it.
"""

import math

import torch
from case_r28_dkl_log_det_underflow import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://hackmd.io/@NLM/SJUL8LQAF"
DESCRIPTION = "control: DKL marginal likelihood with log|K| from the Cholesky factor: finite"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"all[- ]zero", r"\bdead\b", r"underflow\w*"]


def step(watch):
    return _step(watch, cholesky=True)


def truth(run):
    assert run.det == 0.0 and math.isfinite(run.slogdet) and math.isfinite(run.loss)
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    for n, p in run.model.named_parameters():
        assert bool(torch.isfinite(p).all()), n
