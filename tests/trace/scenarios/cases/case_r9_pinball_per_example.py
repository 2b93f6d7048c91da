"""Control: the same three-quantile network and pinball loss with each quantile's column taken as
``pred[:, k]``, shape ``(N,)`` like the target: each prediction is compared with its own example.
The pinball gradient is piecewise constant (``-q`` or ``1 - q`` per example), a healthy step.

Source: https://jackmedley.com/post/quantile_regression (the pinball loss for several quantiles).
"""

from case_r9_pinball_slice_broadcast import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://jackmedley.com/post/quantile_regression"
DESCRIPTION = "control: pinball loss with pred[:, k] (N,) against y (N,): per-example quantiles"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, r"broadcast", r"all-zero"]


def step(watch):
    return _step(watch, column=False)


def truth(run):
    assert run.shapes == [(64,)] * 3
