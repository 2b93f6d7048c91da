"""Control: the same network and batch of empty masks with the smoothing term added to numerator
and denominator, ``1 - (2 sum(p t) + 1) / (sum(p) + sum(t) + 1)``, the usual soft Dice: with an
empty target the loss is ``1 - 1 / (sum(p) + 1)``, its gradient pushes every prediction towards 0,
and every parameter gets a finite, nonzero gradient (small: a sum over 1024 pixels sits in the
denominator).

Source: https://ar5iv.labs.arxiv.org/html/2207.09521 ("with a heuristic value for epsilon, the
Dice loss handles empty labels correctly").
"""

import torch
from case_r8_dice_empty_masks_zero_grad import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://ar5iv.labs.arxiv.org/html/2207.09521"
DESCRIPTION = "control: soft Dice smoothed in numerator and denominator: empty masks train"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, r"all-zero", r"\bdead\b", r"changed none", r"did not (move|change)"]


def step(watch):
    return _step(watch, smooth_both=True)


def truth(run):
    assert 0.0 < run.loss < 1.0
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        assert not torch.equal(run.before[n], run.after[n]), n
