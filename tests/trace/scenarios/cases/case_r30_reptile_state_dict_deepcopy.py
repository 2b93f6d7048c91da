"""The control of ``reptile_state_dict_not_copied``: the same Reptile meta-iteration with
``weights_before = copy.deepcopy(model.state_dict())``.  The inner loop adapts the model, and the
outer update moves the initialisation a tenth of the way towards the adapted weights: every
parameter ends at ``theta + 0.1 (phi - theta)``.  Every gradient is finite and nonzero; the
parameters are written by ``load_state_dict`` after the inner optimizer's last step, by design.

Source: https://www.emergentmind.com/topics/reptile-algorithm ("Reptile is a gradient-based
meta-learning algorithm that efficiently finds a shared initialization for rapid adaptation across
tasks"; "It uses a first-order approach by updating the initialization towards task-specific
parameters, balancing zero-shot and post-adaptation performance"; "the inner loop consists of T
steps of stochastic gradient descent").  Adapted: the bug's model, task and step sizes with the deep
copy.
"""

import torch
from case_r30_reptile_state_dict_not_copied import OUTER_STEP
from case_r30_reptile_state_dict_not_copied import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://www.emergentmind.com/topics/reptile-algorithm"
DESCRIPTION = "control: Reptile with copy.deepcopy(state_dict): theta + 0.1 (phi - theta), healthy"
ASK = []
MUST = [
    [
        HEALTHY_OK,
        r"load_state_dict|(written|set|assigned|changed|moved)[^\n]{0,60}(outside|without)[^\n]{0,40}optimi[sz]er",
    ]
]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"all[- ]zero",
    r"not in (the |any )?optimi[sz]er",
    r"alias\w*",
]


def step(watch):
    return _step(watch, deepcopy=True)


def truth(run):
    for g in run.grads:
        for n, t in g.items():
            assert bool(torch.isfinite(t).all()) and bool(t.abs().sum() > 0), n
    for n, p in run.model.named_parameters():
        expected = run.initial[n] + (run.adapted[n] - run.initial[n]) * OUTER_STEP
        assert torch.allclose(p.detach(), expected, atol=1e-6), n
        assert not torch.equal(p.detach(), run.adapted[n]), n
