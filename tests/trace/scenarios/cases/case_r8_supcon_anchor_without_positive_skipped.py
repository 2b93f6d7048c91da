"""Control: the same encoder, batch and supervised contrastive loss, with the count of positives
clamped to at least 1 (the guard later versions of the SupCon reference code use): an anchor without
a positive contributes 0 instead of ``0 / 0``.  Loss and gradients are finite; the two singleton
examples still act as negatives for the others, so every layer gets a gradient.

Source: https://nowutnrom.pages.dev/4archives/Literature%20Notes/Readings/Paper%20Supervised%20Contrastive%20Learning%20for%20Pre-trained%20Language%20Model%20Fine-tuning.html
(the same notes: the per-anchor mean over "labels.count(labels[i]) - 1" positives).
"""

import torch
from case_r8_supcon_singleton_class_nan import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://nowutnrom.pages.dev/4archives/Literature%20Notes/Readings/"
    "Paper%20Supervised%20Contrastive%20Learning%20for%20Pre-trained%20Language%20Model%20"
    "Fine-tuning.html"
)
DESCRIPTION = "control: the same SupCon batch, positive count clamped to 1: finite, healthy"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"all-zero", r"dead"]


def step(watch):
    return _step(watch, guard=True)


def truth(run):
    assert run.positives.tolist()[-2:] == [0.0, 0.0]
    assert run.loss == run.loss
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
