"""Control: the same per-element MSE reduced with ``.mean()`` before ``backward``: a scalar loss,
every parameter gets a finite, nonzero gradient and the step runs.

Source: https://www.pythonclear.com/errors/runtimeerror-grad-can-be-implicitly-created-only-for-scalar-outputs/
(the page's fix: reduce the output to a scalar, by summing or averaging, before ``backward``).
"""

import torch
from case_r6_loss_vector_backward import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://www.pythonclear.com/errors/"
    "runtimeerror-grad-can-be-implicitly-created-only-for-scalar-outputs/"
)
DESCRIPTION = "control: MSELoss(reduction='none').mean() then backward: a scalar, a normal step"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_ERROR, CLAIMS_NONFINITE]


def step(watch):
    return _step(watch, reduce=True)


def truth(run):
    assert run.error is None
    for p in run.model.parameters():
        assert p.grad is not None and bool(torch.isfinite(p.grad).all())
        assert bool(p.grad.abs().sum() > 0)
