"""The control of ``siglip_loss_eye_labels``: the same SigLIP step with the labels the formula
expects, ``2 * torch.eye(n) - 1`` (+1 for the 32 matching pairs, -1 for the 992 others).  With the
bias at -10 the negatives' loss is small but each of them has a nonzero gradient, pushing its
similarity down, and the positives' pull theirs up.  Every parameter gets a finite, nonzero
gradient.

Source: https://masonlwang.com/knowledgemap/notes/papers/SigLIP ("instead of a InfoNCE loss, we do a
binary cross entropy loss on positive or negative pairs"; "the probability is computed as a dot
product between the embeddings, times a weight plus a bias"; "bias initialization is important,
since there is imbalance between positive and negative examples").  Adapted: the bug's towers, data,
initialisation and optimizer with the signed labels.
"""

import torch
from case_r31_siglip_loss_eye_labels import N
from case_r31_siglip_loss_eye_labels import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://masonlwang.com/knowledgemap/notes/papers/SigLIP"
DESCRIPTION = "control: SigLIP log(1 + exp(-y z)) with y = 2 eye - 1: negatives pushed apart"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"all[- ]zero",
    r"label\w*[^\n]{0,40}(wrong|swapped|invert\w*|flipped)",
    r"not in (the |any )?optimi[sz]er",
]


def step(watch):
    return _step(watch, signed=True)


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    off = ~torch.eye(N, dtype=torch.bool)
    assert bool((run.z_grad[off] > 0).all())
    assert bool((run.z_grad.diagonal() < 0).all())
