"""Control: the same network and full backward hook with ``nn.ReLU()`` (not in place): the hook
sees the convolution's output gradient and every parameter trains.

Source: https://github.com/pytorch/pytorch/issues/61519 (the same reproduction; the issue's
network has an ``nn.ReLU()`` that is not in place before the in-place one, and NASLib asked for
"option that disable in-place ReLu that allows use pytorch 'register_full_backward_hook'",
automl/NASLib#113).
"""

import torch
from case_r5_backward_hook_inplace_relu import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://github.com/pytorch/pytorch/issues/61519"
DESCRIPTION = "control: the same hook with ReLU() not in place: trains, hook called"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_NO_ZERO_GRAD, CLAIMS_ERROR, r"in-?place"]


def step(watch):
    return _step(watch, inplace=False)


def truth(run):
    assert run.error is None and len(run.seen) == 1
    for p in run.model.parameters():
        assert p.grad is not None and bool(torch.isfinite(p.grad).all())
        assert bool(p.grad.abs().sum() > 0)
