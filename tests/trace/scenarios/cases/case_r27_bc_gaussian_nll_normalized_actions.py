"""The control of ``bc_gaussian_probability_not_log_underflow``: the same Gaussian policy trained
by the negative log-likelihood of the expert's actions, ``-policy(obs).log_prob(a).sum(-1).mean()``,
after normalising the actions to zero mean and unit standard deviation per dimension.  Every
log-density is finite and moderate, every parameter (the mean network and ``log_std``) gets a
finite, nonzero gradient and moves.

Source: https://calwoo.github.io/notes/concepts/reinforcement-learning/behavioral-cloning/index.html
("Behavioral cloning (BC) is the most direct approach: treat the demonstrations as a supervised
learning dataset"; "Minimize the negative log-likelihood of expert actions under the learned
policy").  Adapted: the bug's expert, policy and optimizer, with the actions standardised.
"""

import torch
from case_r27_bc_gaussian_probability_not_log_underflow import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://calwoo.github.io/notes/concepts/reinforcement-learning/behavioral-cloning/index.html"
)
DESCRIPTION = "control: BC by Gaussian NLL on standardised actions, every parameter trains"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"\bdead\b",
    r"underflow\w*",
    r"vanish\w*",
    r"explod\w*",
]


def step(watch):
    return _step(watch, log_likelihood=True, normalise=True)


def truth(run):
    assert abs(float(run.actions.mean())) < 1e-4
    assert bool(torch.isfinite(run.log_prob).all()) and float(run.log_prob.min()) > -50
    for n, p in run.policy.named_parameters():
        g = run.grads[n]
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        assert not torch.equal(p.detach(), run.before[n]), n
