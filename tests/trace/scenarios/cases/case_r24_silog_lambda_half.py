"""The control of ``silog_lambda_one_bias_no_gradient``: the same depth network and scenes with
the loss at ``lambda = 0.5``, the value Eigen et al. used.  Half of the mean error's square stays
in the loss, so a global shift of the log depth is trained: the output bias gets a gradient of the
same order as its weight's, and every gradient is finite and nonzero.

Source: https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1 (blog post 'Scale Invariant Log
Loss Mathematical Proof', a copy of guillesanbri.com's: "Setting lambda = 0 reduces to elementwise
L2, while lambda = 1 is the scale-invariant error exactly. We use the average of these, i.e.,
lambda = 0.5, finding that this produces good absolute-scale predictions").  Adapted: the bug's
network and data at ``lambda = 0.5``.
"""

import torch
from case_r24_silog_lambda_one_bias_no_gradient import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1 (blog post 'Scale Invariant Log"
    " Loss Mathematical Proof')"
)
DESCRIPTION = "control: scale-invariant log loss at lambda = 0.5: the global scale is trained too"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"all[- ]zero",
    r"\bzero grad\w*",
]


def step(watch):
    return _step(watch, lam=0.5)


def truth(run):
    assert float(run.grads["2.bias"].abs()) > 1e-2
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
