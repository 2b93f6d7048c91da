"""Control: ``torch.nn.utils.weight_norm`` applied before the optimizer is built: the optimizer
holds ``weight_g`` and ``weight_v``, both get gradients and move.

Source: https://pytorch.org/docs/main/generated/torch.nn.utils.weight_norm.html (its example
applies ``weight_norm`` to the module first).
"""

import torch
from case_r9_weight_norm_after_optimizer import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://pytorch.org/docs/main/generated/torch.nn.utils.weight_norm.html"
DESCRIPTION = "control: weight_norm before the optimizer: weight_g and weight_v train"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, r"no optimizer", r"weight_[gv][^\n]{0,40}(no gradient|\bNone\b)"]


def step(watch):
    return _step(watch, norm_first=True)


def truth(run):
    for n in run.before:
        assert run.held[n], n
        assert not torch.equal(run.before[n], run.after[n]), n
