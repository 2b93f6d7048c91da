"""Control: the same regressor with ``var = sigmoid(head) + 1e-6`` (Gaussian YOLOv3 puts its
uncertainty through a sigmoid): every variance is positive, the Gaussian negative log-likelihood
of targets close to the predicted mean is below zero (a density above 1), and the step is
ordinary: every gradient finite and nonzero.  A negative NLL is not a bug for a continuous
distribution.

Source: https://github.com/jwchoi384/Gaussian_YOLOv3/issues/19 ("if the predicted mean value
equals GT value and variance close to 0, the NLL loss could be negative"; the author: "I think NLL
loss can be negative").
"""

import torch
from case_r7_gaussian_nll_raw_variance_raises import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://github.com/jwchoi384/Gaussian_YOLOv3/issues/19"
DESCRIPTION = "control: sigmoid variance head, GaussianNLLLoss negative (density > 1): healthy"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"loss (is|was|went|goes|became|turned) negative",
    r"not (a )?log-?probabilit",
    r"unbounded",
]


def step(watch):
    return _step(watch, positive=True)


def truth(run):
    assert run.error is None
    assert bool((run.var > 0).all())
    assert run.loss < 0  # a negative negative-log-likelihood, as the thread says
    for p, b in zip(run.model.parameters(), run.before, strict=True):
        assert bool(torch.isfinite(p.grad).all()) and bool(p.grad.abs().sum() > 0)
        assert not torch.equal(p.detach(), b)
