"""Control: the same model, batches and ``StepLR``, in the documented order
(``optimizer.step()`` then ``scheduler.step()``): the first update is made at the initial learning
rate 0.1, the second at 0.01.

Source: https://runebook.dev/en/docs/pytorch/generated/torch.optim.lr_scheduler.lrscheduler
("1. Forward, Loss, Backward... 2. Update the model weights: optimizer.step() 3. Update the
learning rate: scheduler.step()").
"""

from case_r6_scheduler_before_optimizer_step import LR
from case_r6_scheduler_before_optimizer_step import step as _step
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = "https://runebook.dev/en/docs/pytorch/generated/torch.optim.lr_scheduler.lrscheduler"
DESCRIPTION = "control: optimizer.step() then scheduler.step(): the first update at lr 0.1"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, r"before[^\n]{0,40}optimizer\.step", r"\bwrong order\b"]


def step(watch):
    return _step(watch, scheduler_first=False)


def truth(run):
    assert abs(run.moved[0] - LR) < 1e-6
    assert abs(run.moved[1] - LR * 0.1) < 1e-6
