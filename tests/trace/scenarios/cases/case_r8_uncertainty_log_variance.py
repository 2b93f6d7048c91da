"""Control: the same two-task network and steps with the task uncertainty learned as ``s = log
sigma^2`` (``nn.Parameter(torch.zeros(2))``), the loss ``sum(exp(-s_i) L_i / 2 + s_i / 2)``, as
Kendall et al. and the M2GRL paper write it.  The variances shrink as the tasks fit (``s``
negative), so the total loss is negative, which is right for this objective; every value and
gradient is finite.

Source: https://gh1.taotu78.com/99731/M2GRL/issues/2 ("we train the network to predict the log
variance, s := log sigma^2 ... The exponential mapping also allows us to regress unconstrained
scalar values, where exp(-s) is resolved to the positive domain giving valid values for
variance").
"""

import torch
from case_r8_uncertainty_raw_variance_negative import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://gh1.taotu78.com/99731/M2GRL/issues/2"
DESCRIPTION = "control: uncertainty weights as log-variance: total loss negative, all finite"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"log-?probabilit", r"explod"]


def step(watch):
    return _step(watch, raw=False)


def truth(run):
    assert run.loss == run.loss and run.loss < 0  # finite, and negative: s_i / 2 < 0
    assert bool((run.before < 0).all())  # log-variances negative: sigma^2 below 1, still > 0
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
