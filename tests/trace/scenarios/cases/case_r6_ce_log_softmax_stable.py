"""Control: the same classifier and batch, the loss written with ``F.log_softmax`` (the fused,
stable form): the loss is large but finite and every gradient is finite.

Source: https://lynx-cortex.pages.dev/phase-05-probability-information/break/00-break-log-of-softmax/
(the page's safe version: "ce_safe ... -(logits[target] - logsumexp(logits))").
"""

import torch
from case_r6_ce_log_of_softmax_underflow import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://lynx-cortex.pages.dev/phase-05-probability-information/break/00-break-log-of-softmax/"
)
DESCRIPTION = "control: the same wide logits through F.log_softmax: finite loss and gradients"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE]


def step(watch):
    return _step(watch, hand_written=False)


def truth(run):
    assert run.loss != float("inf") and run.loss == run.loss
    for g in run.grads.values():
        assert bool(torch.isfinite(g).all())
    for p in run.model.parameters():
        assert bool(torch.isfinite(p).all())
