"""The control of ``pointer_mask_updated_before_scoring``: the same pointer network with the
visited mask updated after the step's scores, so each step masks only the positions pointed to at
earlier steps.  Masked scores are ``-inf`` by design (the last step has a single position left, its
log-probability exactly 0); no row is all ``-inf``, the loss is finite and every parameter gets a
finite, nonzero gradient.

Source: https://piyushjajoo.github.io/ilya-30u30-book/chapters/part-5-advanced/18-pointer-networks.html
("We introduce a new architecture to learn the conditional probability of an output sequence with
elements that are discrete tokens corresponding to positions in an input sequence"; "Instead of
predicting words from a vocabulary, point to positions in the input"; the page's examples: "Sorting
| Numbers | Sorted order (indices)").  Adapted: the bug's network, data and optimizer, the mask
updated after the scores.
"""

import math

import torch
from case_r29_pointer_mask_updated_before_scoring import N
from case_r29_pointer_mask_updated_before_scoring import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://piyushjajoo.github.io/ilya-30u30-book/chapters/part-5-advanced/18-pointer-networks.html"
DESCRIPTION = "control: pointer net masks visited positions after scoring: -inf by design, finite"
ASK = []
MUST = [[HEALTHY_OK, r"mask\w*[^\n]{0,60}(by design|intended|expected)"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bdead\b",
    r"not in (the |any )?optimi[sz]er",
]


def step(watch):
    return _step(watch, early_mask=False)


def truth(run):
    picked = run.logits.gather(2, run.target[..., None]).squeeze(-1)
    assert bool(torch.isfinite(picked).all())
    masked = torch.isneginf(run.logits).sum(-1)  # step t masks the t earlier picks
    assert bool((masked == torch.arange(N)).all())
    assert math.isfinite(run.loss)
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
