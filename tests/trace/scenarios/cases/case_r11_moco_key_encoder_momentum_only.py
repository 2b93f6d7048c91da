"""Control: the same MoCo step as MoCo's code writes it: the key encoder's parameters have
``requires_grad = False`` and the keys are computed under ``torch.no_grad()``; the optimizer is
built over ``model.parameters()`` and skips the key encoder (no ``.grad``), which moves only by the
momentum update ``k = 0.99 * k + 0.01 * q`` made in the forward.  The query encoder trains.

Source: https://disks.eu.org/dfeng/notes/blob/main/MoCo.md (the key encoder is a separate,
slowly changing copy of the query encoder).
"""

import torch
from case_r11_moco_key_encoder_trained import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://disks.eu.org/dfeng/notes/blob/main/MoCo.md"
DESCRIPTION = "control: MoCo key encoder frozen, keys under no_grad, momentum update only"
ASK = []
MUST = [
    [
        HEALTHY_OK,
        r"encoder_k[^\n]{0,120}(momentum|without (an|the) optimizer|outside (an|the) optimizer)",
    ]
]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"encoder_k[^\n]{0,80}(got|gets|received) (a )?gradient",
    r"encoder_k[^\n]{0,80}(stepped|moved) by (the |an )?optimizer",
    r"^summary:[^\n]*encoder_q[^\n]{0,60}(no gradient|\bNone\b)",
]


def step(watch):
    return _step(watch, freeze_key=True)


def truth(run):
    assert all(g is None for g in run.k_grads)
    assert all(
        torch.allclose(a, b, atol=1e-6) for a, b in zip(run.k_after, run.momentum_only, strict=True)
    )
