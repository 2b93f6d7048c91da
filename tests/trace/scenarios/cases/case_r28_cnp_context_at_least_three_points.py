"""The control of ``cnp_context_size_zero_mean_nan``: the same conditional neural process with
the number of context points drawn from 3 to 9, so every batch has a context set; the mean of the
encoded context points is finite and each of the two watched steps is an ordinary maximum-likelihood
step on the target points (all 20 points, the context among them).  Every gradient is finite and
nonzero at both steps.

Source: https://jem-mosig.com/2019/04/garnelo_conditional_2018/ ("We want to predict the values
y^(t) = f(x^(t)) of an (unknown) function f at a given set of target coordinates x^(t). We are
provided with a set of context points {x^(c), y^(c)} at which the function values are known";
"similar to GPs, NPs learn distributions over functions and predict their uncertainty").  Adapted:
the bug's model, curves, optimizer and generators with the context size drawn from 3 to 9.
"""

import torch
from case_r28_cnp_context_size_zero_mean_nan import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://jem-mosig.com/2019/04/garnelo_conditional_2018/"
DESCRIPTION = "control: CNP with 3 to 9 context points per batch: mean aggregation finite"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"all[- ]zero", r"\bdead\b", r"empty"]


def step(watch):
    return _step(watch, low=3)


def truth(run):
    assert min(run.sizes) >= 3 and run.error is None and len(run.losses) == 2
    for loss, grads in zip(run.losses, run.grads, strict=True):
        assert torch.isfinite(torch.tensor(loss))
        for n, g in grads.items():
            assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
