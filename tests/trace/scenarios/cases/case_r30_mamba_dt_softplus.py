"""The control of ``mamba_dt_without_softplus``: the same selective state space layer, model, data
and optimizer with ``dt = softplus(proj(x) + bias)`` as Mamba writes it.  Every step size is
positive (3e-4 to 0.4 here), every decay ``exp(dt * A)`` is in ``(0, 1)``, the scan stays bounded,
the loss is finite and every parameter gets a finite, nonzero gradient.

Source:
https://awsdocs-neuron.readthedocs-hosted.com/en/latest/_sources/nki/library/api/selective-scan.rst
("Selective scan (SSM) as in Mamba models"; "decay[t] = exp(dt[t] * A[:, n]) inp[t] = dt[t] * x[t] *
B[:, n, t] state[t] = decay[t] * state[t-1] + inp[t] y[t] += C[:, n, t] * state[t]"; ":param dt:
Time step tensor of shape [B_dim, channels, L]. Should be positive."; ":param A: State transition
matrix of shape [channels, state_size]. Typically negative.").  Adapted: the bug's layer and data
with the softplus (the kernel receives ``dt`` already positive).
"""

import math

import torch
from case_r30_mamba_dt_without_softplus import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/_sources/nki/library/api/"
    "selective-scan.rst"
)
DESCRIPTION = "control: Mamba selective scan with dt = softplus(proj(x) + bias): decay < 1, finite"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"all[- ]zero",
    r"explod\w*",
    r"not in (the |any )?optimi[sz]er",
]


def step(watch):
    return _step(watch, positive_dt=True)


def truth(run):
    assert bool((run.dt > 0).all())
    assert bool((run.a_bar < 1).all()) and bool((run.a_bar > 0).all())
    assert bool(torch.isfinite(run.out).all()) and math.isfinite(run.loss)
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
