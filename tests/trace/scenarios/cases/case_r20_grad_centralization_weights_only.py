"""Control: the same regressor with gradient centralization as the method defines it, on the
weight matrices only: each output unit's incoming-weight gradient has its mean removed, the bias
gradients are left as they are.  The output bias keeps its (nonzero) gradient and moves towards the
targets' offset; every gradient is finite and nonzero and every parameter moves.

Source: https://junaidaliop.github.io/zij/math/gradientcentralizationgc/ ("GC operates on the
gradient of each weight vector (for example each output unit's incoming weights, or each
convolution filter). It subtracts the mean of the gradient's components"; "This centralized
gradient then feeds any base optimizer (SGD with momentum, Adam, etc.) in place of the raw
gradient").  Adapted as the bug.
"""

import torch
from case_r20_grad_centralization_on_bias import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://junaidaliop.github.io/zij/math/gradientcentralizationgc/"
DESCRIPTION = "control: gradient centralization on weight matrices only, biases untouched: trains"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"all[- ]zero", r"\bzero grad\w*"]


def step(watch):
    return _step(watch, biases=False)


def truth(run):
    assert not run.biases
    params = dict(run.model.named_parameters())
    for n in ("0.bias", "2.bias"):
        assert torch.equal(run.grads[n], run.raw[n]), n  # biases untouched
    for n in ("0.weight", "2.weight"):
        assert torch.allclose(run.grads[n].mean(dim=1), torch.zeros(1), atol=1e-6), n
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        assert not torch.equal(params[n].detach(), run.start[n]), n
