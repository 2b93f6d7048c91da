"""Control: the same regressor, inputs and three SGD steps at learning rate 1e-3: the loss goes
down and every gradient is finite.

Source: https://discuss.pytorch.org/t/tricks-for-being-able-to-use-a-higher-learning-rate/142179
("So the highest learning rate I can use is like 1e-3"; "the model does converge after a long
time and I get meaningful predictions from it").
"""

import torch
from case_r5_lr_too_high_inf import step as _step
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://discuss.pytorch.org/t/tricks-for-being-able-to-use-a-higher-learning-rate/142179"
DESCRIPTION = "control: the same steps at lr 1e-3: finite gradients, the loss goes down"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_NO_ZERO_GRAD, r"diverg", r"explod"]


def step(watch):
    return _step(watch, lr=1e-3)


def truth(run):
    assert all(run.finite)
    assert run.losses[2] < run.losses[0]
    assert bool(torch.isfinite(torch.tensor(run.losses)).all())
