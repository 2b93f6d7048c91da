"""The control of ``realnvp_binary_mask_registered_as_parameter``: the same RealNVP flow with each
coupling's binary mask registered as a buffer.  The mask is not a parameter, gets no gradient and
stays exactly ``{0, 1}``; the ``s`` and ``t`` networks (scale bounded by ``tanh``) get finite,
nonzero gradients; the log-likelihood is the base density of ``z`` plus the sum of the scales.

Source: https://www.tensorflow.org/probability/api_docs/python/tfp/bijectors/real_nvp_default_template
("Build a scale-and-shift function using a multi-layer neural network"; "It takes the d-dimensional
input x[0:d] and returns the D-d dimensional outputs loc ('mu') and log_scale ('alpha')";
"shift_only: Python bool indicating if only the shift term shall be computed (i.e. NICE bijector).
Default: False").  Adapted: the bug's flow, data and optimizer with the masks as buffers.
"""

import math

import torch
from case_r28_realnvp_binary_mask_registered_as_parameter import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://www.tensorflow.org/probability/api_docs/python/tfp/bijectors/real_nvp_default_template"
)
DESCRIPTION = "control: RealNVP couplings with the binary masks as buffers, tanh-bounded scales"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"all[- ]zero", r"\bdead\b"]


def step(watch):
    return _step(watch, as_parameter=False)


def truth(run):
    assert math.isfinite(run.loss)
    assert not any("mask" in n for n in run.grads)
    for mask in run.masks:
        assert bool(((mask == 0) | (mask == 1)).all())
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
