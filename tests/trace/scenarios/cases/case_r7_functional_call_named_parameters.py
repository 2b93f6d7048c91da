"""Control: the same functional-style step with ``params = dict(model.named_parameters())``: the
dict holds the model's own ``nn.Parameter`` objects, ``functional_call`` computes with them, every
parameter of the model gets its gradient and the optimizer moves it.

Source: https://pytorch.org/docs/stable/generated/torch.func.functional_call.html ("Performs a
functional call on the module by replacing the module parameters and buffers with the provided
ones"; passing the module's own parameters keeps them the ones that are trained).
"""

import torch
from case_r7_functional_call_detached_copies import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://pytorch.org/docs/stable/generated/torch.func.functional_call.html"
DESCRIPTION = "control: functional_call with dict(model.named_parameters()): the model trains"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, r"no gradient", r"not (the )?parameters of (the )?model"]


def step(watch):
    return _step(watch, copies=False)


def truth(run):
    for n, p in run.model.named_parameters():
        assert run.params[n] is p
        assert p.grad is not None and bool(p.grad.abs().sum() > 0), n
        assert not torch.equal(p.detach(), run.before[n]), n
