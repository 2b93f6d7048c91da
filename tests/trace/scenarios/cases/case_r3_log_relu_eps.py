"""Control: the thread's fix, log(relu(t) + 1e-7): the forward stays finite (negative entries
become log(1e-7), with zero gradient through the ReLU), the loss and every gradient are
finite and nonzero.

Source: https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1 (forum thread "How to Solve
the Loss Becoming NaN Due to Using torch.log()": "A recommended approach is to use a
non-linearity like ReLU ... and then add a small epsilon").
"""

import torch
from case_r3_log_of_negative_nan import step as _step
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1 "
    "(forum thread 'How to Solve the Loss Becoming NaN Due to Using torch.log()')"
)
DESCRIPTION = "control: log(relu(t) + 1e-7): finite loss, finite nonzero gradients"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_NO_ZERO_GRAD]


def step(watch):
    return _step(watch, relu_eps=True)


def truth(run):
    assert bool((run.fc_out < 0).any())
    assert run.loss == run.loss
    for g in run.grads:
        assert bool(torch.isfinite(g).all()) and bool((g != 0).any())
