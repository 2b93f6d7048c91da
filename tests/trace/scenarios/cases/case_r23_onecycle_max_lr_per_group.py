"""The control of ``onecycle_scalar_max_lr_trains_frozen_group``: the same two parameter groups
with ``OneCycleLR(optimizer, max_lr=[0.0, 0.01], ...)``, one peak per group.  The body's schedule
is 0 throughout (``0 / div_factor = 0``), so the step leaves the body where it was, as intended,
while the head starts its cycle at 4e-4 and moves.  The body still gets gradients (it is not
frozen by ``requires_grad``); only its learning rate is 0.  Every gradient is finite and nonzero.

Source: https://leyaa.ai/codefly/learn/pytorch/part-2/pytorch-learning-rate-differential/challenge
("Frozen layers should have zero learning rate to prevent updates. Trainable layers should have a
small learning rate to fine-tune without large jumps"; ``optimizer = torch.optim.SGD([{'params':
model.layer1.parameters(), 'lr': 0.001}, {'params': model.layer2.parameters(), 'lr': 0.01}],
momentum=0.9)``).  Adapted: the bug's body and head, SGD with momentum 0.9, 100 total steps, the
first one watched, 64 examples.
"""

import torch
from case_r23_onecycle_scalar_max_lr_trains_frozen_group import step as _step
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://leyaa.ai/codefly/learn/pytorch/part-2/pytorch-learning-rate-differential/challenge"
)
DESCRIPTION = "control: OneCycleLR(max_lr=[0.0, 0.01]): the body's group stays at lr 0"
ASK = []
MUST = [[HEALTHY_OK, r"(lr|learning rate)\s*(of|=|is)?\s*0\b", r"frozen", r"freez\w*"]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"all[- ]zero", r"\bzero grad\w*", r"\bdead\b"]


def step(watch):
    return _step(watch, max_lr=[0.0, 0.01])


def truth(run):
    assert run.lrs[0] == 0.0 and run.lrs[1] > 0
    for n, p in run.model.named_parameters():
        moved = not torch.equal(p.detach(), run.before[n])
        assert moved == n.startswith("head."), n
        g = run.grads[n]
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
