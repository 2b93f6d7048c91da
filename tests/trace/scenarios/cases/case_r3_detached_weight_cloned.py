"""Control: the same logging with model[2].weight.detach().clone(): the copy is independent,
the weight keeps its values, and the backward and step run as usual.

Source: https://theneuralbase.com/pytorch/learn/beginner/detach-stopping-gradient-flow/
("Use .clone().detach() when you need a true independent copy").
"""

import torch
from case_r3_detached_weight_edited_inplace import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://theneuralbase.com/pytorch/learn/beginner/detach-stopping-gradient-flow/"
DESCRIPTION = "control: weight.detach().clone() normalised for the logs: step runs as usual"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_NO_ZERO_GRAD, CLAIMS_ERROR, r"in-?place"]


def step(watch):
    return _step(watch, clone=True)


def truth(run):
    assert run.error is None and abs(run.logged - 1.0) < 1e-5
    for p in run.model.parameters():
        assert p.grad is not None and bool(torch.isfinite(p.grad).all())
    w = run.model[2].weight
    assert torch.allclose(w.detach(), run.before - 0.1 * w.grad)  # an ordinary SGD step
