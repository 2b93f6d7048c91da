"""Control: the same masked head with the blog's fix: the rows of the ignored positions are
masked with 0 instead of -inf (their targets still -1, ignored).  The loss and every gradient
are finite; the masked-out columns of the two kept rows simply get no gradient.

Source: https://jkschin.com/blog/2023/cross-entropy-loss-ignore-index/ ("The TLDR here is that
in the example mask above, you can mask the first two columns with -inf as that's what you want,
but from the third column onwards, mask with 0").
"""

import torch
from case_r4_ignore_index_inf_mask_row_nan import logits_grad
from case_r4_ignore_index_inf_mask_row_nan import step as _step
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://jkschin.com/blog/2023/cross-entropy-loss-ignore-index/"
DESCRIPTION = "control: ignored rows masked with 0, not -inf: loss and gradients finite"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_NO_ZERO_GRAD, r"no gradient", r"\bdead\b"]


def step(watch):
    return _step(watch, zero_rows=True)


def truth(run):
    assert bool(torch.isfinite(run.loss))
    assert bool(torch.isfinite(logits_grad(run)).all())
    for n, gr in run.grads.items():
        assert bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0), n
