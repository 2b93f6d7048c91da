"""Control: the same two padded micro-batches accumulated the way the page recommends: each
micro-batch's cross entropy with ``reduction='sum'`` over its real tokens, divided once by the
number of real tokens of the whole effective batch (38).  The accumulated ``.grad`` equals the
gradient of the mean loss over all 38 tokens (to rounding), as one large batch would give; every
embedding row is used at some real target, and every gradient is finite and nonzero.

Source: https://omnissiah.systems/blog/gradient-accumulation-silent-divergence ("The fix: set
reduction='sum' in your loss function and divide by total tokens or total samples yourself, once,
before the optimizer step").
"""

import torch
from case_r13_accumulation_mean_per_microbatch_tokens import V
from case_r13_accumulation_mean_per_microbatch_tokens import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://omnissiah.systems/blog/gradient-accumulation-silent-divergence"
DESCRIPTION = "control: accumulation, CE summed per micro-batch / 38 real tokens: exact mean"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    CLAIMS_NO_ZERO_GRAD,
    r"(not|never) (divided|scaled|normali[sz]ed)",
    r"all-zero",
    r"no gradient",
]


def step(watch):
    return _step(watch, per_token=True)


def truth(run):
    assert run.counts == [32, 6]
    assert len(run.used) == V
    for g, r in zip(run.grads, run.reference, strict=True):
        assert torch.allclose(g, r, rtol=1e-4, atol=1e-7)
        assert bool(torch.isfinite(g).all())
    assert bool((run.grads[0].abs().sum(1) > 0).all())
