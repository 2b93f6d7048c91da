"""The control of ``gaussian_nll_target_var_swapped``: the same heteroscedastic regressor with the
loss called in its order, ``GaussianNLLLoss()(mean, target, var)``: the mean head is fitted to the
targets with each example weighted by its predicted precision, and the variance head to the
squared residuals.  Every gradient is finite and nonzero and is the negative log-likelihood's.

Source: https://www.paddlepaddle.org.cn/documentation/docs/en/api/paddle/nn/GaussianNLLLoss_en.html
("This class is used to train a neural network predicts the input and variance of a gaussian
distribution that label are supposed to be coming from. This means input and variance should be
functions(the neural network) of some inputs").  Adapted: PyTorch's ``GaussianNLLLoss``, whose
arguments come in the same order (input, target, variance); the bug's model and data.
"""

import torch
from case_r25_gaussian_nll_target_var_swapped import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://www.paddlepaddle.org.cn/documentation/docs/en/api/paddle/nn/GaussianNLLLoss_en.html"
)
DESCRIPTION = "control: GaussianNLLLoss(mean, target, var) in its argument order"
ASK = []
MUST = [[HEALTHY_OK, r"GaussianNLL"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"all[- ]zero",
    r"swap\w*",
    r"(argument|parameter)s?[^\n]{0,20}order",
]


def step(watch):
    return _step(watch, swapped=False)


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        assert torch.allclose(g, run.wanted[n], atol=1e-6), n
    g_mean, g_var = run.at_outputs
    assert not torch.allclose(g_mean, -g_var, atol=1e-7)
