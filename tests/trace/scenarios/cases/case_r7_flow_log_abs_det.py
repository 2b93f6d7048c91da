"""Control: the same two-layer affine flow with the log-determinant written
``torch.log(scale.abs()).sum()``: the loss is finite and the step ordinary.

Source: https://runebook.dev/en/docs/pytorch/distributions/torch.distributions.transforms.Transform.log_abs_det_jacobian
(its correctly implemented affine transform: "The log-abs-det-Jacobian is log|a|").
"""

import torch
from case_r7_flow_log_det_without_abs import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://runebook.dev/en/docs/pytorch/distributions/"
    "torch.distributions.transforms.Transform.log_abs_det_jacobian"
)
DESCRIPTION = "control: the flow's log-det as log(|scale|): finite loss, ordinary step"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE]


def step(watch):
    return _step(watch, absolute=True)


def truth(run):
    assert run.loss == run.loss and abs(run.loss) != float("inf")
    for n, g in run.grads.items():
        assert torch.allclose(g, run.ref_grads[n], atol=1e-5), n
        assert bool(g.abs().sum() > 0), n
