"""Control: gradient descent by hand with ``.data`` assignment, the notebook's
``w.data = w.data - 0.01 * w.grad.data`` then ``w.grad.data.zero_()``, on the same regression
model, two iterations: each update puts a new tensor in every parameter's ``.data`` (a new
storage), which is how the update is written, not a slip; the parameters move and the gradients
are zeroed each time.

Source: https://github.com/houchenll/nlp-origin ("用 pytorch 实现线性回归": ``w.data = w.data -
0.01 * w.grad.data``, ``w.grad.data.zero_()``).
"""

import torch
from case_r10_manual_sgd_rebinds_name import step as _step
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://github.com/houchenll/nlp-origin"
DESCRIPTION = "control: manual update `p.data = p.data - lr * p.grad.data`, grads zeroed"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_NO_ZERO_GRAD,
    r"(did not|didn't|never) (move|change)|moved nothing|changed none",
]


def step(watch):
    return _step(watch, mode="data")


def truth(run):
    params = list(run.model.parameters())
    assert all(not torch.equal(p.detach(), b) for p, b in zip(params, run.before, strict=True))
