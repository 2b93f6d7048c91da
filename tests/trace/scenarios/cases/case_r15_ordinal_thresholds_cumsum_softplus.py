"""Control: the same cumulative-link model with its thresholds kept in order by construction,
``theta = theta_1 + cumsum(softplus(gaps))``: the cumulative probabilities increase with j, every
class probability is positive, the negative log-likelihood is finite, and every parameter (the
first threshold and the gaps included) gets a finite, nonzero gradient.

Source: https://fa.bianp.net/blog/2013/logistic-ordinal-regression/ (the constraint "theta is a
non-decreasing vector"; "we define theta_0 = -inf and theta_K = inf").  Adapted: the constraint
written as a reparametrisation of the thresholds (the post optimises with it as a constraint).
"""

import torch
from case_r15_ordinal_thresholds_unordered_nan import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://fa.bianp.net/blog/2013/logistic-ordinal-regression/"
DESCRIPTION = "control: ordinal thresholds = first + cumsum(softplus(gaps)): probabilities > 0"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"negative (probabilit\w*|values?)",
    r"no gradient",
    r"all-zero",
]


def step(watch):
    return _step(watch, ordered=True)


def truth(run):
    assert bool((run.theta[1:] > run.theta[:-1]).all())
    assert bool((run.probs > 0).all())
    assert run.loss == run.loss and run.loss < float("inf")
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
