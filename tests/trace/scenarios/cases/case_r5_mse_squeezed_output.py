"""Control: the same linear regression with the squeeze assigned (``x = x.squeeze(-1)``): the
prediction and the target both have shape (N,), the loss is the mean squared error of the
regression, and the step is an ordinary healthy one.

Source: https://discuss.pytorch.org/t/why-the-model-fail-to-converge-without-a-manul-weight-initialization/50431
(the same script, whose ``forward`` returns ``x`` after ``x.squeeze()``: here the result of the
squeeze is what is returned).
"""

import torch
from case_r5_mse_broadcast_unsqueezed_output import right_grad
from case_r5_mse_broadcast_unsqueezed_output import step as _step
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://discuss.pytorch.org/t/"
    "why-the-model-fail-to-converge-without-a-manul-weight-initialization/50431"
)
DESCRIPTION = "control: squeeze assigned, prediction and target both (N,): plain regression"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_NO_ZERO_GRAD, r"broadcast", r"target (size|shape)"]


def step(watch):
    return _step(watch, fixed=True)


def truth(run):
    assert run.pred.shape == (32,)
    assert torch.allclose(run.grad, right_grad())
    assert bool(run.grad.abs().sum() > 0)
