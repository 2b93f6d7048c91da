"""The control of ``pi_model_no_perturbation_zero_consistency``: the same Pi-model step with the
perturbations in place, Gaussian input noise on each of the two unlabelled passes and dropout
(0.2) in the network, in training mode.  The two predictions differ, the consistency loss is
positive and its own gradient is nonzero, so the unlabelled batch shapes the step alongside the
16 labelled examples.  Every gradient is finite and nonzero.

Source: https://www.chipfoundryservices.com/topic/consistency-regularization ("enforces model
predictions to remain invariant under realistic perturbations of unlabeled inputs — adding an
auxiliary loss term that penalizes inconsistent predictions on differently augmented versions of
the same unlabeled example"; "Pi-Model (2017) Same model (dropout diff) Stochastic augment MSE of
predictions").  Adapted: the bug's classifier with ``Dropout(0.2)`` after the ``Tanh``, noise of
0.1 on every pass, the ramp-up weight at ``t = 0.5``, SGD at 0.1.
"""

import torch
from case_r23_pi_model_no_perturbation_zero_consistency import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://www.chipfoundryservices.com/topic/consistency-regularization"
DESCRIPTION = "control: Pi-model with input noise and dropout: the consistency term is live"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"\bdead\b",
    r"eval(uation)? mode",
]


def step(watch):
    return _step(watch, perturbed=True)


def truth(run):
    assert not torch.equal(run.p1, run.p2) and run.consistency > 0
    assert run.replayed == run.consistency  # the replay is the watched step
    assert any(bool(g.abs().sum() > 0) for g in run.cons_grads)
    for g in run.grads:
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
