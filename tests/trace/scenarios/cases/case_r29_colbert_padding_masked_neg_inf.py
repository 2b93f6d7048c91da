"""The control of ``colbert_padding_zeroed_not_masked``, a healthy step with many exact zeros: the
same late-interaction retriever with the padding filled with ``-inf`` before MaxSim, so each query
token's maximum is over the document's real tokens only.  MaxSim sends each query token's gradient
to one document token per document, by design; the embedding rows of tokens absent from the batch
and the padding row (``padding_idx=0``) get exactly zero gradient.  Every parameter tensor gets a
finite, nonzero gradient.

Source: https://saikatkumardey.com/ml-wiki/concepts/late-interaction ("Encode each token of the
query and each token of the document independently — small per-token vectors, indexable. At query
time, compute a tiny interaction step using all token vectors: for each query token, find its
best-matching document token (max similarity over all document tokens). Sum across query tokens.
This is “late” interaction").  Adapted: the bug's encoder, batch and optimizer with the padding
masked by ``masked_fill(-inf)``.
"""

import torch
from case_r29_colbert_padding_zeroed_not_masked import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://saikatkumardey.com/ml-wiki/concepts/late-interaction"
DESCRIPTION = "healthy: ColBERT MaxSim with padding masked_fill(-inf): zero rows by design"
ASK = []
MUST = [
    [
        HEALTHY_OK,
        r"max\w*[^\n]{0,80}(picks?|pick(ed|s)?|select\w*|only some|one entry)",
        r"(pick|select)\w*[^\n]{0,60}max\w*",
        r"padding_idx|padding row",
        r"(not|never) in (the )?batch|absent",
    ]
]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"not in (the |any )?optimi[sz]er",
    r"requires_grad\s*(=|is|was)?\s*False",
]


def step(watch):
    return _step(watch, masked_fill=True)


def truth(run):
    assert int(run.picked_padding.sum()) == 0
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert bool((run.grads["embed.weight"].abs().sum(1) == 0).any())  # rows absent from the batch
