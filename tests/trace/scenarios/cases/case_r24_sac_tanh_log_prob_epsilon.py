"""The control of ``sac_tanh_log_prob_no_epsilon``: the same policy, states, noise and critic,
with the correction written as in the answer's code, ``log(1 - a**2 + epsilon)`` with
``epsilon = 1e-6``.  The saturated actions' correction is ``log(1e-6)``, finite; their gradient
through ``tanh`` is zero (``1 - a**2`` is 0 there), while the other 60 states carry the actor's
gradient: every gradient is finite and nonzero.

Source: https://ja.stackoverflow.org.cn/questions/55008214 (a Soft Actor-Critic blog's code:
``log_prob = Normal(mean, std).log_prob(mean+ std*z.to(device)) - torch.log(1 - action.pow(2) +
epsilon)``; "log_prob 項がどのように派生したかを知りたいです": how was the log_prob term
derived?).  Adapted: the bug's linear Gaussian policy and data, ``epsilon = 1e-6``.
"""

import torch
from case_r24_sac_tanh_log_prob_no_epsilon import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://ja.stackoverflow.org.cn/questions/55008214"
DESCRIPTION = "control: log(1 - a^2 + 1e-6): saturated actions finite, every gradient finite"
ASK = []
MUST = [[HEALTHY_OK, r"saturat\w*"]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"\bdead\b", r"all[- ]zero"]


def step(watch):
    return _step(watch, eps=1e-6)


def truth(run):
    assert bool((run.a.abs() == 1.0).any())  # the same saturated actions
    assert bool(torch.isfinite(run.loss))
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
