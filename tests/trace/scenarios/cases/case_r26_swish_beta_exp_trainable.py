"""The control of ``swish_beta_item_not_trained``: the same Swish with a trainable slope written as
``beta = exp(b)`` from a parameter ``b`` started at 0 (``beta = 1``), kept as a tensor in the
forward, ``silu(beta * x) / beta``.  ``b`` of each activation gets a finite, nonzero gradient and
moves like every weight and bias.

Source: https://en.wiki.x.io/wiki/Swish_(function) ("where beta can be constant (usually set to 1)
or trainable"; "When beta is trainable, this constraint can be enforced by beta = e^b, where b is
trainable"; "The swish paper was then updated to propose the activation with the learnable
parameter beta").  Adapted: the bug's network, data and optimizer.
"""

import torch
from case_r26_swish_beta_item_not_trained import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://en.wiki.x.io/wiki/Swish_(function)"
DESCRIPTION = "control: Swish beta = exp(b) kept as a tensor: b trained"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"\bdead\b",
    r"no grad\w*",
    r"\.item\(\)",
]


def step(watch):
    return _step(watch, as_exp=True)


def truth(run):
    for n, p in run.model.named_parameters():
        g = run.grads[n]
        assert g is not None and bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        assert not torch.equal(p.detach(), run.before[n]), n
    assert "1.log_beta" in run.grads
