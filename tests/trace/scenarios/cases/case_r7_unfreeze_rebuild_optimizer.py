"""Control: the same gradual unfreezing with the optimizer rebuilt after ``layer4`` is unfrozen
(``filter(lambda p: p.requires_grad, ...)`` again, at a lower learning rate): ``layer4`` and the
head move, ``layer3`` stays frozen on purpose.

Source: https://www.codegenes.net/blog/gradual-unfreezing-pytorch ("# Update the optimizer to
include the newly unfrozen parameters: optimizer = optim.SGD(filter(lambda p: p.requires_grad,
model.parameters()), lr = 0.0001, momentum=0.9)").
"""

import torch
from case_r7_unfreeze_without_new_optimizer import held
from case_r7_unfreeze_without_new_optimizer import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://www.codegenes.net/blog/gradual-unfreezing-pytorch"
DESCRIPTION = "control: optimizer rebuilt after unfreezing layer4: layer4 and the head move"
ASK = []
MUST = [[HEALTHY_OK, r"frozen"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"no optimizer",
    r"not (held|in (the|any) optimizer)",
    r"never (moved|updated|stepped)",
]


def step(watch):
    return _step(watch, rebuild=True)


def truth(run):
    ids = held(run.opt)
    for n, p in run.model.named_parameters():
        if n.startswith("layer3."):
            assert p.grad is None and id(p) not in ids, n  # frozen on purpose
        else:
            assert id(p) in ids and not torch.equal(p.detach(), run.before[n]), n
