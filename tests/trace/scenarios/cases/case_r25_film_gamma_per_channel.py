"""The control of ``film_gamma_not_unsqueezed_broadcast``: the same FiLM network with ``gamma``
and ``beta`` reshaped to ``(N, C, 1, 1)`` before modulating the ``(N, C, H, W)`` features: one
scale and one shift per channel and per example, the same at every spatial position.  Example 0's
output depends on its own conditioning only; every gradient is finite and nonzero.

Source: http://vaclavkosar.com/ml/Feature-wise-Linear-Modulation-Layer ("Feature-wise
transformations conditions each input feature separately"; "This affine conditioning is called
Feature-wise Linear Modulation (FiLM) layer").  Adapted: the bug's network, data and optimizer.
"""

import torch
from case_r25_film_gamma_not_unsqueezed_broadcast import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "http://vaclavkosar.com/ml/Feature-wise-Linear-Modulation-Layer"
DESCRIPTION = "control: FiLM gamma/beta reshaped to (N, C, 1, 1): per channel, per example"
ASK = []
MUST = [[HEALTHY_OK, r"FiLM"]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"\bdead\b", r"all[- ]zero", r"broadcast\w*"]


def step(watch):
    return _step(watch, per_channel=True)


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert bool((run.cross[1:] == 0).all()) and bool(run.cross[0].abs().sum() > 0)
