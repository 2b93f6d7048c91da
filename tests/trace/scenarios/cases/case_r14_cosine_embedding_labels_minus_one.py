"""Control: the same siamese encoder and pairs with the dissimilar pairs labelled -1, the label
``nn.CosineEmbeddingLoss`` expects.  Dissimilar pairs whose cosine is above the margin (0) get the
loss ``cos(x1, x2)`` and are pushed apart; those already below it get 0 and no gradient, as the
loss intends.  The gradient differs from that of the similar pairs alone; every gradient is finite
and nonzero.

Source: https://sachinruk.github.io/programming_tips/cosine-embedding-loss.html (the formula:
``max(0, cos(x1, x2) - margin)`` "if y = -1"; "if the similarity is lower than a certain margin
... nothing happens ... This causes these examples to have zero gradient").
"""

import torch
from case_r14_cosine_embedding_labels_zero import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://sachinruk.github.io/programming_tips/cosine-embedding-loss.html"
DESCRIPTION = "control: CosineEmbeddingLoss with labels 1/-1: dissimilar pairs pushed apart"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"label\w*[^\n]{0,60}(should|must) be (-1|minus one)",
    r"no gradient",
    r"all-zero",
]


def step(watch):
    return _step(watch, minus_one=True)


def truth(run):
    dissimilar = ~run.same
    assert bool((run.per_pair[dissimilar] > 0).any())
    differs = False
    for gr, gp in zip(run.grads, run.pos_grads, strict=True):
        assert bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0)
        differs = differs or not torch.allclose(gr, gp, atol=1e-6)
    assert differs
