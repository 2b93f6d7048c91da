"""Control: the same Q-learning step with the target computed under torch.no_grad(): the
network is called twice, the second call records no graph, and the gradient is the textbook
one (the target a constant).

Source: https://theneuralbase.pages.dev/pytorch/learn/beginner/detach-stopping-gradient-flow/
(target values are the classic case for stopping gradient flow; "The with torch.no_grad()
alternative disables gradients for the entire block").
"""

import torch
from case_r3_target_not_detached import detached_reference
from case_r3_target_not_detached import step as _step
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://theneuralbase.pages.dev/pytorch/learn/beginner/detach-stopping-gradient-flow/"
DESCRIPTION = "control: Q target under torch.no_grad(): second call without graph, grads exact"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_NO_ZERO_GRAD,
    r"not detached",
    r"^summary: (?!ok\b)[^\n]*(\bcut\b|unused|no_grad)",
]


def step(watch):
    return _step(watch, detach_target=True)


def truth(run):
    assert not run.target_grad
    expected = detached_reference(run.batch)
    for g, e in zip(run.grads, expected, strict=True):
        assert torch.allclose(g, e, rtol=1e-5, atol=1e-7)
