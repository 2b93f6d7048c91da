"""Control: the same residual network of weight-standardised convolutions, written as on
codegenes.net with the epsilon inside the square root, ``(W - mean) / sqrt(var(W) + 1e-5)``, and
every convolution with its default initialisation.  One momentum-SGD step: finite loss, every
gradient finite and nonzero.

Source: https://www.codegenes.net/blog/weight-standardization-pytorch ("std =
torch.sqrt(torch.var(weight, dim=[1, 2, 3], keepdim=True) + 1e-5)"; "where epsilon is a small
constant to avoid division by zero").
"""

import torch
from case_r8_weight_std_zero_init_no_eps import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://www.codegenes.net/blog/weight-standardization-pytorch"
DESCRIPTION = "control: weight standardization with eps in the sqrt, default init: healthy"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"all-zero", r"\bdead\b"]


def step(watch):
    return _step(watch, eps=1e-5, zero_init_last=False)


def truth(run):
    assert all(run.finite.values())
    assert run.loss == run.loss
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
