"""Control: the same EMA evaluation with ``restore()`` called after it: the second training
step starts from exactly the weights the optimizer left, and both steps are ordinary.

Source: https://jiechu520.github.io/2023/03/21/EMA (``apply_shadow`` before evaluation,
``restore`` after it).
"""

import torch
from case_r9_ema_shadow_not_restored import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://jiechu520.github.io/2023/03/21/EMA"
DESCRIPTION = "control: EMA apply_shadow() for eval, then restore(): step 2 starts from step 1"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"outside (the |any |an )?(torch\.optim )?optimi[sz]er",
    r"not by (the|an|any) optimi[sz]er",
]


def step(watch):
    return _step(watch, restore=True)


def truth(run):
    for n in run.left:
        assert torch.equal(run.start[n], run.left[n]), n
