"""Control: the same projection of ``scale`` onto non-negative values after the optimizer step,
done inside ``torch.no_grad()`` as the thread advises: the step moves every parameter, the clamp
sets the entries the step pushed below zero to 0, nothing raises.

Source: https://discuss.pytorch.org/t/leaf-variable-was-used-in-an-inplace-operation/308/2
("If you don't intend for the operation to be differentiable, you can use torch.no_grad: with
torch.no_grad(): x += 1").
"""

import torch
from case_r4_param_inplace_outside_no_grad import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://discuss.pytorch.org/t/leaf-variable-was-used-in-an-inplace-operation/308/2"
DESCRIPTION = "control: scale.clamp_(min=0) under torch.no_grad() after the step: fine"
ASK = []
MUST = [[HEALTHY_OK, r"\bscale\b[^\n]{0,80}(clamp|edit|changed|assigned|outside|in-?place)"]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_NO_ZERO_GRAD, CLAIMS_ERROR]


def step(watch):
    return _step(watch, no_grad=True)


def truth(run):
    assert run.error is None
    assert bool((run.after_step < 0).any())  # the step pushed some entries below zero
    s = run.model.scale.detach()
    assert bool((s >= 0).all()) and torch.equal(s, run.after_step.clamp(min=0.0))
