"""The control of ``revnet_coupling_in_place_on_chunks``: the same reversible residual network with
the coupling written out of place, ``y1 = x1 + f(x2)``, ``y2 = x2 + g(y1)``, ``torch.cat([y1, y2],
1)``.  Each block is invertible (its input is rebuilt from its output as ``x2 = y2 - g(y1)``,
``x1 = y1 - f(x2)``); here autograd stores the activations as usual.  The loss and every gradient
are finite and nonzero.  Nothing is wrong.

Source: https://paperswithcode.com/method/reversible-residual-block ("Reversible Residual Blocks are
skip-connection blocks that learn reversible residual functions with reference to the layer inputs.
It is proposed as part of the RevNet CNN architecture"; "y_1 = x_1 + F(x_2), y_2 = x_2 + G(y_1)";
"x_2 = y_2 − G(y_1), x_1 = y_1 − F(x_2)").  Adapted: the bug's network, data and optimizer with the
coupling out of place.
"""

import math

import torch
from case_r33_revnet_coupling_in_place_on_chunks import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://paperswithcode.com/method/reversible-residual-block"
DESCRIPTION = "control: RevNet coupling out of place, y1 = x1 + f(x2), y2 = x2 + g(y1)"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"\bdead\b", r"in[- ]?place"]


def step(watch):
    return _step(watch, in_place=False)


def truth(run):
    assert run.error is None
    assert len(run.rebuilt) == 3 and all(run.rebuilt)
    assert len(run.losses) == 1 and math.isfinite(run.losses[0])
    for n, g in run.grads[0].items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
