"""The control of ``cls_token_concatenated_after_encoder``: the class token prepended to the patch
sequence before the encoder, as in ViT, and the head read from its output.  The class token
attends to every patch, the logits differ from input to input, and every parameter (the
embedding, the encoder, the class token and the head) gets a finite, nonzero gradient.

Source: https://ai.stackexchange.com/questions/28326/why-class-embedding-token-is-added-to-the-visual-transformer/34781
("In order to perform classification, a CLS token is added at the beginning of the resulting
sequence"; "the state of the CLS token on the output layer is used for classification").
Adapted: the bug's patch embedding, encoder layer, class token (N(0, 0.02^2)) and head, 64
inputs of 8 patches, AdamW at 1e-3.
"""

import torch
from case_r23_cls_token_concatenated_after_encoder import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://ai.stackexchange.com/questions/28326/why-class-embedding-token-is-added-to-the-visual-"
    "transformer/34781"
)
DESCRIPTION = "control: class token prepended before the encoder (ViT): every parameter trains"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"\bdead\b",
    r"requires_grad\s*(=|is|was)?\s*False",
]


def step(watch):
    return _step(watch, cls_first=True)


def truth(run):
    assert not torch.equal(run.logits, run.logits[:1].expand_as(run.logits))
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
