"""Control: the same network with the custom sigmoid ``Function``'s backward written right,
``grad_output * s * (1 - s)``: ``torch.autograd.gradcheck`` passes on it, the step's gradients
equal the ones ``torch.sigmoid`` gives on the same weights, and every parameter gets a finite,
nonzero gradient.

Source: https://github.com/pm2550/csen-342-wi26 ("Fix and Verify: Correct the math and confirm
that the difference between analytic and numerical gradients drops below 10^-7"; "Implement a
custom Sigmoid activation function by subclassing ``torch.autograd.Function``").
"""

import torch
from case_r12_custom_sigmoid_backward_wrong import relative_difference
from case_r12_custom_sigmoid_backward_wrong import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://github.com/pm2550/csen-342-wi26"
DESCRIPTION = "control: custom sigmoid Function, backward grad * s * (1 - s): gradcheck passes"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"(wrong|incorrect)[^\n]{0,30}(backward|gradient|derivative)",
    r"mismatch",
    r"all-zero",
]


class MySigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        s = 1 / (1 + torch.exp(-x))
        ctx.save_for_backward(s)
        return s

    @staticmethod
    def backward(ctx, grad_output):
        (s,) = ctx.saved_tensors
        return grad_output * s * (1 - s)


def step(watch):
    return _step(watch, function=MySigmoid)


def truth(run):
    assert run.gradcheck
    for n, ref in run.reference.items():
        assert relative_difference(run.grads[0][n], ref) < 1e-5, n
    for grads in run.grads:
        for n, gr in grads.items():
            assert bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0), n
