"""The control of ``xlstm_exponential_gates_unstabilised``: the same sLSTM with the paper's
stabiliser, ``m_t = max(f~ + m_{t-1}, i~)``, ``i' = exp(i~ - m_t)``, ``f' = exp(f~ + m_{t-1} -
m_t)``.  The rescaling cancels in ``h = o * c / n`` (the same hidden states in exact arithmetic),
every gate is at most 1, ``c`` and ``n`` stay bounded over the 64 positions, and every parameter
gets a finite, nonzero gradient.

Source: https://openreview.net/forum?id=0s9QXjy6YM ("Firstly, we introduce exponential gating with
appropriate normalization and stabilization techniques"; "sLSTM with a scalar memory, a scalar
update, and new memory mixing").  Adapted: the bug's model, data and optimizer with the stabiliser.
"""

import math

import torch
from case_r31_xlstm_exponential_gates_unstabilised import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://openreview.net/forum?id=0s9QXjy6YM"
DESCRIPTION = "control: sLSTM exponential gates with the stabiliser m_t: bounded, finite"
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
    return _step(watch, stabilised=True)


def truth(run):
    assert bool(torch.isfinite(run.n).all()) and float(run.n.abs().max()) < 1e3
    assert bool(torch.isfinite(run.out).all()) and math.isfinite(run.loss)
    for k, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), k
