"""Control: the same epoch of 6 micro-batches accumulated by 4 with an optimizer step on the
micro-batches left over at the end of the epoch (``if num_iter > 0: optimizer.step()``) before the
validation phase zeroes the gradients: every training batch reaches the weights, which end where a
second SGD step on the 5th and 6th micro-batches' gradient takes them.  Every gradient is finite
and nonzero.

Source: https://github.com/piergiaj/pytorch-i3d/issues/57 ("the leftover accumulated training
gradients are zeroed before calling ``optimizer.step()`` when phase change from training to
validation": stepping on them before the phase changes is the fix).
"""

import torch
from case_r14_accumulation_leftover_zeroed_at_phase_change import LR, N_BATCHES
from case_r14_accumulation_leftover_zeroed_at_phase_change import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://github.com/piergiaj/pytorch-i3d/issues/57"
DESCRIPTION = "control: accumulate 4, the 2 micro-batches left over get their own step: healthy"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"discard\w*",
    r"never (applied|used|stepped)",
    r"not (applied|used|stepped)",
    r"no gradient",
]


def step(watch):
    return _step(watch, flush_leftover=True)


def truth(run):
    assert run.passes == N_BATCHES
    for p, q, gr in zip(run.params, run.once_params, run.leftover_grads, strict=True):
        assert torch.allclose(p, q - LR * gr, atol=1e-6)  # the leftover step was taken
        assert not torch.equal(p, q)
