"""Control: the same tied model with the error message's advice, one ``torch.optim.Adam`` over all
parameters (which accepts the dense gradient of the shared weight): the step runs and every
parameter gets a finite, nonzero gradient.

Source: https://github.com/OpenNMT/OpenNMT-py/issues/1015 ("Is there any problem with changing the
optimizer to adam according to the error message?"; the maintainer: "use adam instead").
"""

import torch
from case_r6_sparseadam_tied_output_projection import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://github.com/OpenNMT/OpenNMT-py/issues/1015"
DESCRIPTION = "control: the tied model with one Adam over all parameters: the step runs"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_ERROR, CLAIMS_NONFINITE]


def step(watch):
    return _step(watch, optimizer="Adam")


def truth(run):
    assert run.error is None
    for p in run.model.parameters():
        assert p.grad is not None and bool(torch.isfinite(p.grad).all())
        assert bool(p.grad.abs().sum() > 0)
    assert not torch.equal(run.model.emb.weight.detach(), run.before)
