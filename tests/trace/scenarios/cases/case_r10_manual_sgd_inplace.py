"""Control: the kata's example update done in place, ``p -= lr * p.grad`` under ``torch.no_grad()``,
then ``p.grad.zero_()``, two iterations on the same regression model: every parameter moves each
iteration, no optimizer involved.  A healthy hand-written step.

Source: https://mlkatas.com/kata/23 (its example: ``with torch.no_grad(): w -= 0.1 * w.grad``).
"""

import torch
from case_r10_manual_sgd_rebinds_name import step as _step
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://mlkatas.com/kata/23"
DESCRIPTION = "control: manual SGD in place `p -= lr * p.grad`, grads zeroed, no optimizer"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_NO_ZERO_GRAD,
    r"(did not|didn't|never) (move|change)|moved nothing|changed none",
    r"values between steps",
]


def step(watch):
    return _step(watch, mode="inplace")


def truth(run):
    params = list(run.model.parameters())
    assert all(not torch.equal(p.detach(), b) for p, b in zip(params, run.before, strict=True))
    assert [p.data_ptr() for p in params] == run.ptrs
