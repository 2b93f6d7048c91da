"""Control: the same ``GradScaler`` and micro-batches accumulated as intended: ``zero_grad()``, then
``scaler.scale(loss / K).backward()`` for each micro-batch, then one ``scaler.step(optimizer)`` and
one ``scaler.update()``.  The one step reads the mean of the micro-batches' gradients, unscaled.

Source: https://kaggle.curtischong.me/ml-concepts/gradient-accumulation (the accumulation the page
describes).
"""

import torch
from case_r10_scaler_step_every_microbatch import K
from case_r10_scaler_step_every_microbatch import step as _step
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://kaggle.curtischong.me/ml-concepts/gradient-accumulation"
DESCRIPTION = "control: GradScaler, loss / K per micro-batch, one scaler.step after K backwards"
ASK = []
MUST = [[HEALTHY_OK, r"micro-?batch"]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_NO_ZERO_GRAD, r"never unscaled|not unscaled|skipped"]


def step(watch):
    return _step(watch, accumulate=True)


def truth(run):
    assert len(run.read) == 1
    mean = [sum(gs) / K for gs in zip(*run.fresh, strict=True)]
    assert all(
        torch.allclose(r, m, rtol=1e-4, atol=1e-7) for r, m in zip(run.read[0], mean, strict=True)
    )
