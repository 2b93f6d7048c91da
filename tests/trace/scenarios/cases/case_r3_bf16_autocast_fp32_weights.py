"""Control: the same model and step with float32 weights and bfloat16 autocast around the
forward (the "fp32 master weights + bf16" of the thread): the optimizer adds the update to
float32 weights and every entry moves.

Source: https://github.com/pytorch/pytorch/issues/120376 (the comparison with "fp32 master
weights + bf16 model weights"; "If you move [autocast] to only wrap the forward pass as it
should be then you get much better results").  Reproduced with CPU autocast to bfloat16.
"""

import torch
from case_r3_bf16_weights_update_rounds_away import step as _step
from case_r3_bf16_weights_update_rounds_away import unchanged_fraction
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://github.com/pytorch/pytorch/issues/120376"
DESCRIPTION = "control: float32 weights, bfloat16 autocast on the forward: every entry moves"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_NO_ZERO_GRAD,
    r"underflow",
    r"all-zero",
    r"(weights?|parameters?|entries)[^\n]*(unchanged|did(n't| not) (move|change))",
    r"round(ed|s)? (away|back)",
]


def step(watch):
    return _step(watch, bf16_weights=False)


def truth(run):
    assert run.model[0].weight.dtype == torch.float32
    for g in run.grads:
        assert bool((g != 0).all()) and bool(torch.isfinite(g).all())
    for i in range(4):
        assert unchanged_fraction(run, i) == 0.0  # every entry moved
