"""The control of ``variational_dropout_mask_shared_across_batch``: the same LSTM classifier with
the variational dropout mask drawn per sequence, shape ``(batch, 1, features)``: each sequence keeps
the same units at every time step, and different sequences drop different units.  Every embedding
dimension is kept by some sequences, so every column of the embedding table and of
``weight_ih_l0`` gets gradient; every parameter gets a finite, nonzero gradient.

Source: https://vietanh.dev/glossary/variational%20dropout ("In Variational Dropout, we repeat the
same dropout mask at each time step for both inputs, outputs, and recurrent layers (drop the same
network units at each time step). This is in contrast to ordinary Dropout where different dropout
masks are sampled at each time step").  Adapted: the bug's data, model and optimizer with the mask
shape ``(32, 1, 16)`` (input dropout only).
"""

import torch
from case_r27_variational_dropout_mask_shared_across_batch import B, E
from case_r27_variational_dropout_mask_shared_across_batch import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://vietanh.dev/glossary/variational%20dropout"
DESCRIPTION = "control: variational dropout mask (B, 1, F), per sequence, every column trains"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"all[- ]zero", r"\bzero grad\w*", r"\bdead\b"]


def step(watch):
    return _step(watch, mask_shape=(B, 1, E))


def truth(run):
    assert run.mask.shape == (B, 1, E)
    assert bool((run.mask.sum(0) > 0).all())  # each unit kept by some sequence
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    for name in ("embedding.weight", "lstm.weight_ih_l0"):
        assert bool((run.grads[name].abs().sum(0) > 0).all()), name
    assert bool((run.grads["embedding.weight"].abs().sum(1) > 0).all())
