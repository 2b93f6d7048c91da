"""The control of ``mlm_loss_on_every_position``: the same encoder, sequences and masks, with the
labels set to ``-100`` (cross-entropy's ``ignore_index``) at every position that was not masked,
so that the loss is taken at the masked positions only.  The logits of visible positions get an
exactly zero gradient (they are not scored), the masked ones carry the whole signal, and every
parameter gets a finite, nonzero gradient.

Source: https://leeroopedia.com/index.php/Principle:Lucidrains_X_transformers_Masked_Token_Prediction_Training
("The model predicts the original tokens at all positions, but loss is computed only on masked
positions. This is similar to BERT MLM training").  Adapted: the bug's one-layer encoder, 32
sequences of 12 tokens from 20, token 20 as ``[MASK]``, AdamW at 1e-3.
"""

import torch
from case_r23_mlm_loss_on_every_position import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://leeroopedia.com/index.php/Principle:Lucidrains_X_transformers_Masked_Token_"
    "Prediction_Training"
)
DESCRIPTION = "control: MLM labels -100 at unmasked positions: loss on the masked tokens only"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"\bdead\b",
    r"cop(y|ies|ying) (the |its )?input",
]


def step(watch):
    return _step(watch, ignore_unmasked=True)


def truth(run):
    assert bool((run.labels[~run.masked] == -100).all()) and bool(run.masked.any())
    per_position = run.logit_grad.pow(2).sum(-1)
    assert bool((per_position[~run.masked] == 0).all())  # visible positions not scored
    assert bool((per_position[run.masked] > 0).all())
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
