"""The control of ``wavenet_same_padding_sees_future``: the same gated residual stack with each
dilated convolution's input padded on the left only, by ``(kernel - 1) * d`` zeros, so that output
``t`` reads inputs ``t - 2d``, ``t - d`` and ``t``: the prediction at position ``t`` depends on
samples up to ``t`` and nothing later (asserted from the gradient of one output with respect to the
input), and the target ``t + 1`` is not among them.  Every gradient is finite and nonzero.

Source: https://github.com/maxrmorrison/causal_conv ("Now we will implement a basic causal
convolution. We do this by padding the input signal with zeros, causing it to shift in time. This
shift allows the convolution to never use 'future' values of x[t] when computing y[t]";
"Now we will add a dilation to our convolution").  Adapted: the bug's network, data and optimizer
with left padding in PyTorch.
"""

import torch
from case_r26_wavenet_same_padding_sees_future import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://github.com/maxrmorrison/causal_conv"
DESCRIPTION = "control: WaveNet convs padded on the left by 2d: output t reads t-14..t only"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"\bdead\b",
    r"future",
    r"leak\w*",
    r"not causal|non-?causal",
]


def step(watch):
    return _step(watch, causal=True)


def truth(run):
    assert max(run.reach) == 20 and min(run.reach) == 6  # t0 - 2 * (1 + 2 + 4) .. t0
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
