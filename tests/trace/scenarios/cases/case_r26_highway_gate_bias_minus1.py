"""The control of ``highway_gate_bias_minus13_shallow``: the same three-layer highway network with
the transform gates' biases at -1, the value the source recommends to bias a layer towards
carrying its input early in training without closing the gate.  The gates start around
``sigmoid(-1) = 0.27`` and the transform and gate weights get gradients of the same order as the
head's (each above 1e-2 of it).  Every gradient is finite and nonzero.

Source: https://theneuralperspective.com/2016/12/13/highway-networks/ ("The bias vector in the
transform gates can be initialized with negative values. This means that the network is initially
biased towards the carry gate (C)"; ``def highway_network(x, num_hidden_units, nonlinearity,
transform_bias=-1.0)``).  Adapted: the bug's network, data and optimizer with the gate bias -1.
"""

import torch
from case_r26_highway_gate_bias_minus13_shallow import ratios
from case_r26_highway_gate_bias_minus13_shallow import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://theneuralperspective.com/2016/12/13/highway-networks/"
DESCRIPTION = "control: 3 highway layers with gate bias -1: gates ~0.27, every layer trains"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"\bdead\b",
    r"vanish\w*",
    r"explod\w*",
]


def step(watch):
    return _step(watch, gate_bias=-1.0)


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert all(0.15 < t < 0.4 for t in run.gates)
    assert all(r > 1e-2 for r in ratios(run).values())
