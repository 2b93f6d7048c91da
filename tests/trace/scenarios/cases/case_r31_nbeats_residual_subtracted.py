"""The control of ``nbeats_residual_subtracted_in_place``: the same N-BEATS forecaster with the
doubly residual stacking written out of place, ``residual = residual - backcast``: each block reads
what the blocks before it left unexplained, the forecasts are summed, the backward runs and every
parameter gets a finite, nonzero gradient; the input window is left as it was.

Source:
https://www.datasciencewithmarco.com/blog/extend-n-beats-for-accurate-time-series-forecasting ("The
N-BEATS model uses a pure deep learning architecture for time series forecasting"; "N-BEATS stands
for Neural Basis Expansion Analyis for Interpretable Time Series"; "As the name suggests, N-BEATS
relies on basis expansion").  Adapted: the bug's model, data and optimizer with the subtraction out
of place.
"""

import math

import torch
from case_r31_nbeats_residual_subtracted_in_place import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://www.datasciencewithmarco.com/blog/extend-n-beats-for-accurate-time-series-forecasting"
)
DESCRIPTION = "control: N-BEATS residual = residual - backcast (out of place)"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"all[- ]zero",
    r"in-?place",
    r"not in (the |any )?optimi[sz]er",
]


def step(watch):
    return _step(watch, in_place=False)


def truth(run):
    assert run.error is None
    assert math.isfinite(run.losses[0])
    for n, g in run.grads.items():
        assert g is not None and bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert run.moved and not run.window_changed
