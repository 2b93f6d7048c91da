"""The control of ``fno_modes_above_coarse_grid``: the same Fourier neural operator and the same two
batches, 64 points then 16, with each spectral layer keeping ``k = min(modes, n // 2 + 1)``
frequencies and the first ``k`` modes of its weight.  Both steps train.  On the 16-point step the
weight's modes 9 to 11 are not used and their entries get exactly zero gradient, while every
parameter, the spectral weights included, gets a finite, nonzero gradient.

Source: https://www.systemdesignpath.com/topics/fourier-neural-operator ("parameterize the kernel of
an integral operator in Fourier space, truncate to a fixed number of low-frequency modes, and
evaluate with an FFT. The learned weights live in spectral space and are independent of the spatial
resolution, so the same trained network applies to any sufficiently fine grid").  Adapted: the bug's
model, data and optimizer with the modes clipped to what each grid holds.
"""

import math

import torch
from case_r32_fno_modes_above_coarse_grid import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://www.systemdesignpath.com/topics/fourier-neural-operator"
DESCRIPTION = "control: FNO with the kept modes clipped to n // 2 + 1 on the coarse grid"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"all[- ]zero",
    r"not in (the |any )?optimi[sz]er",
]


def step(watch):
    return _step(watch, clip=True)


def truth(run):
    assert run.errors == [None, None]
    assert len(run.losses) == 2 and all(math.isfinite(v) for v in run.losses)
    for grads in run.grads:
        for n, g in grads.items():
            assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    coarse = run.grads[1]["spectral.0.weight"]
    assert bool(coarse[..., 9:].abs().sum() == 0) and bool(coarse[..., :9].abs().sum() > 0)
