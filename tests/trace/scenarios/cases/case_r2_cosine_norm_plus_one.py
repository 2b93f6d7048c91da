"""Control: the same cosine normalisation with the thread's fix, h / (||h|| + 1): the all-zero
example gives a zero vector instead of 0 / 0, and the loss and every gradient are finite.

Source: https://discuss.pytorch.org/t/how-to-debug-nan-gradients-in-custom-cosine-normalization-implementation/3591
("Adding an additional + 1.0 to the denominator has been stable for about 40 epochs").
"""

import torch
from case_r2_cosine_norm_zero_row_nan import step as _step
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://discuss.pytorch.org/t/how-to-debug-nan-gradients-in-custom-cosine-normalization-implementation/3591"
DESCRIPTION = "control: same model, h / (h.norm() + 1): the zero row stays finite"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, r"\bdead\b"]


def step(watch):
    return _step(watch, eps=1.0)


def truth(run):
    assert bool((run.h[0] == 0).all())
    assert bool((run.h.amax(0) > 0).all())
    assert bool(torch.isfinite(run.out).all()) and bool(torch.isfinite(run.loss))
    for p in run.model.parameters():
        assert bool(torch.isfinite(p.grad).all()) and bool((p.grad != 0).any())
