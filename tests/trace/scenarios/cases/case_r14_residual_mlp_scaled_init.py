"""Control: the same 20 blocks, the same scaled Kaiming initialisation and the same ``Y = X`` task
with a skip connection around each block, ``x = x + tanh(Linear(x))``.  The identity path carries
the gradient to the first block at the size it has at the last (their bias-gradient norms within a
factor of 10), the residual stream keeps the input's scale, and every gradient is finite and
nonzero.

Source: https://www.orchestra-research.com/intro-to-ai-research/residual-connections ("ResMLP
(The Residual Way) x = x + ReLU(Linear(x)) ... The input is added back to the output ...
Philosophy: 'Keep what you have, then add to it'").  Adapted: ``tanh`` in place of ReLU, as in
the bug.
"""

import torch
from case_r14_plain_mlp_scaled_init_vanishing import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://www.orchestra-research.com/intro-to-ai-research/residual-connections"
DESCRIPTION = "control: the same 20 blocks with skip connections: first block's grad ~ the last's"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"vanish\w*",
    r"explod\w*",
    r"dead (units?|relu|neurons?)",
    r"all-zero",
    r"no gradient",
]


def step(watch):
    return _step(watch, residual=True)


def truth(run):
    for n, gr in run.grads.items():
        assert bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0), n
    assert 0.1 < run.first / run.last < 10
    assert 0.5 < run.out_ratio < 10  # the residual stream neither vanishes nor explodes
