"""The control of ``two_tower_batch_of_one_item``: the same two-tower model and in-batch softmax on
a shuffled batch of 64 interactions with 64 different items.  Each user's positive competes with 63
real negatives, the loss depends on the parameters (6.73 at this first step, not ``log 64``: with a
temperature of 0.1 the untrained cosine logits are far from uniform), and every parameter of both
towers gets a finite, nonzero gradient.

Source: https://genai-systems-lab-ivory.vercel.app/gt/two-tower-reco-architecture ("User tower +
item tower trained with in-batch negatives, L2 normalization for cosine similarity at dot-product
speed"; "Training objective: given a user and an item they interacted with (a positive pair), the
model should produce similar embeddings").  Adapted: the bug's features, towers, temperature and
optimizer on a shuffled batch of distinct items.
"""

import math

import torch
from case_r27_two_tower_batch_of_one_item import BATCH
from case_r27_two_tower_batch_of_one_item import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://genai-systems-lab-ivory.vercel.app/gt/two-tower-reco-architecture"
DESCRIPTION = "control: in-batch negatives on a shuffled batch of 64 distinct items"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"\bdead\b",
    r"vanish\w*",
]


def step(watch):
    items = torch.randperm(200, generator=torch.Generator().manual_seed(2))[:BATCH]
    return _step(watch, items_in_batch=items)


def truth(run):
    assert len(set(run.items.tolist())) == BATCH
    assert abs(run.loss - math.log(BATCH)) > 1e-3
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and float(g.abs().max()) > 1e-4, n
