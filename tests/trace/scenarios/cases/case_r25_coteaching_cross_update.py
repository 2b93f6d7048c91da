"""The control of ``coteaching_empty_selection_nan``: the same co-teaching networks and forget rate
over 128 examples in two full batches of 64: each network keeps its 51 smallest-loss examples and
the peer is updated on them.  Both losses are finite in both iterations and every gradient is
finite and nonzero (the 13 large-loss examples of each batch are left out by design).

Source: https://tomesphere.com/paper/1804.06872 ("we train two deep neural networks simultaneously,
and let them teach each other given every mini-batch: firstly, each network feeds forward all data
and selects some data of possibly clean labels; secondly, two networks communicate with each other
what data in this mini-batch should be used for training; finally, each network back propagates
the data selected by its peer network and updates itself").  Adapted: the bug's networks,
selection and optimizers, on a data set whose size is a multiple of the batch.
"""

import math

import torch
from case_r25_coteaching_empty_selection_nan import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://tomesphere.com/paper/1804.06872"
DESCRIPTION = "control: co-teaching on two full batches: 51 of 64 kept, every loss finite"
ASK = []
MUST = [[HEALTHY_OK, r"co-?teaching", r"small[- ]loss"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"\bempty\b",
]


def step(watch):
    return _step(watch, n=128, batch=64)


def truth(run):
    assert len(run.iterations) == 2
    for size, keep, a, b, grads in run.iterations:
        assert (size, keep) == (64, 51) and not math.isnan(a) and not math.isnan(b)
        for n, g in grads.items():
            assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
