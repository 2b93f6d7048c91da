"""The control of ``drop_path_wraps_residual_sum``: the same network and the same coins (keep,
drop, keep), with stochastic depth on the residual branch only, ``x + drop_path(F(x))``, kept
branches scaled by ``1 / p``.  The dropped middle block's branch is multiplied by zero, so its four
parameters get an exactly zero gradient this step, which is what stochastic depth means; the
identity path carries the gradient on to the stem and the first block, and every other parameter
gets a finite, nonzero gradient.

Source: https://brain.tamnd.com/write/book/dl-pytorch/03/11/8/ ("Stochastic depth regularizes deep
residual networks by randomly skipping residual branches during training"; ``y = x + b_l / p_l
F_l(x)``; "The scaling factor 1/p_l keeps the expected residual contribution unchanged").
Adapted: the bug's model, data and optimizer; the drop on ``F(x)`` only.
"""

import torch
from case_r24_drop_path_wraps_residual_sum import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://brain.tamnd.com/write/book/dl-pytorch/03/11/8/"
DESCRIPTION = "control: x + drop_path(F(x)): only the dropped block's branch gets zero gradient"
ASK = []
MUST = [[HEALTHY_OK, r"drop[_ ]?path", r"stochastic depth", r"dropped", r"skipped"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
    r"stem\.\w+[^\n]{0,40}\bzero",
]


def step(watch):
    return _step(watch, wrap_sum=False)


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()), n
        if n.startswith("blocks.1."):
            assert bool((g == 0).all()), n  # the dropped branch
        else:
            assert bool(g.abs().sum() > 0), n
