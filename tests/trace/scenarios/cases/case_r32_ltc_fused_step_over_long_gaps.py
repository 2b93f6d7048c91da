"""The control of ``ltc_euler_step_over_long_gaps``: the same LTC cell, series and gaps with the LTC
paper's fused (semi-implicit) step, ``(h + dt A f) / (1 + dt (1 / tau + f))``: for any gap it moves
the state part of the way toward ``A f / (1 / tau + f)`` and never past it, so the 8-unit gaps are as
safe as the short ones.  Every state stays finite and small, the loss is finite, and every
parameter gets a finite, nonzero gradient.

Source: https://www.emergentmind.com/topics/liquid-time-constant-networks ("Liquid Time-constant
Networks are biologically inspired continuous-time recurrent architectures that dynamically adjust
neuron time constants based on internal state and external input"; "They utilize neural ODE
formulations and solver-free variants to achieve efficient numerical integration, robust
stability").  Adapted: the bug's cell, data and optimizer with the fused step.
"""

import math

import torch
from case_r32_ltc_euler_step_over_long_gaps import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://www.emergentmind.com/topics/liquid-time-constant-networks"
DESCRIPTION = "control: LTC cell with the fused semi-implicit step over the same long gaps"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"all[- ]zero",
    r"explod\w*|overflow\w*",
    r"not in (the |any )?optimi[sz]er",
]


def step(watch):
    return _step(watch, fused=True)


def truth(run):
    assert bool(torch.isfinite(run.states).all()) and float(run.states.abs().max()) < 10
    assert math.isfinite(run.loss)
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
