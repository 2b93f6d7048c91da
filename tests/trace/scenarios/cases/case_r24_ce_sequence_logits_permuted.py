"""The control of ``ce_sequence_logits_viewed_not_permuted``: the same tagger and data, with the
``(N, L, C)`` logits moved to ``(N, C, L)`` by ``logits.permute(0, 2, 1)``, as the answer says.
The loss is exactly the mean per-token cross-entropy, and every gradient is finite and nonzero.

Source: https://whosebug.com/question/6539086/How-to-compute-Cross-Entropy-Loss-for-sequences
("#input = (batch_size, sequence_length, numb_classes)"; "you need to permute the axes ... so that
it has shape (batch_size, numb_classes, sequence_length), i.e. (N, C, d_1)"; ``input.permute(0,
2, 1)``).  Adapted: the bug's tagger and data.
"""

import torch
from case_r24_ce_sequence_logits_viewed_not_permuted import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://whosebug.com/question/6539086/How-to-compute-Cross-Entropy-Loss-for-sequences"
DESCRIPTION = "control: (N, L, C) logits permuted to (N, C, L): the per-token cross-entropy"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"all[- ]zero", r"\bdead\b", r"scrambl\w*"]


def step(watch):
    return _step(watch, permute=True)


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert torch.allclose(run.loss, run.per_token, atol=1e-6)
