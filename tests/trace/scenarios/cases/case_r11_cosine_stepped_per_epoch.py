"""Control: the same ``CosineAnnealingLR(T_max=1)`` counted in epochs and stepped once per epoch,
after the epoch's two batches: both optimizer steps run at the initial learning rate 0.1 and move
the parameters; the schedule reaches ``eta_min`` only for the next epoch.

Source: https://wiki.hasty.ai/cosineannealinglr ("T_cur is the current number of accumulated
epochs"; "once T_cur = T_max, the learning rate becomes eta_min").
"""

from case_r11_cosine_tmax_epochs_stepped_per_batch import LR
from case_r11_cosine_tmax_epochs_stepped_per_batch import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://wiki.hasty.ai/cosineannealinglr"
DESCRIPTION = "control: CosineAnnealingLR(T_max=1 epoch) stepped once per epoch: both steps at 0.1"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"learning rate[^\n]{0,30}\b0(\.0+)?(?!\.?\d)",
    r"did(n't| not) (move|change)",
    r"schedul[^\n]{0,40}before",
]


def step(watch):
    return _step(watch, per_batch=False)


def truth(run):
    assert run.lrs == [LR, LR]
    assert run.moved == [True, True]
