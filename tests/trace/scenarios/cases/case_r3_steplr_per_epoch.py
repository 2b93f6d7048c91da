"""Control: the same StepLR(step_size=1, gamma=0.1) stepped once, at the end of epoch 0: the
first batch of epoch 1 trains at lr 0.01 and every weight moves.

Source: https://runebook.dev/en/docs/pytorch/generated/torch.optim.lr_scheduler.lrscheduler/torch.optim.lr_scheduler.LRScheduler.step
("For schedulers like StepLR, MultiStepLR, and ExponentialLR, call scheduler.step() once per
epoch"; "optimizer.step() ... then ... scheduler.step()").
"""

from case_r3_steplr_per_batch import step as _step
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK

SOURCE = (
    "https://runebook.dev/en/docs/pytorch/generated/torch.optim.lr_scheduler.lrscheduler/"
    "torch.optim.lr_scheduler.LRScheduler.step"
)
DESCRIPTION = "control: StepLR(1, 0.1) stepped once per epoch: lr 0.01, every weight moves"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_NO_ZERO_GRAD,
    r"(weights?|parameters?|entries)[^\n]*(unchanged|did(n't| not) (move|change))",
    r"round(ed|s)? away",
]


def step(watch):
    return _step(watch, per_batch=False)


def truth(run):
    assert abs(run.lr - 0.01) < 1e-12
    for p, b in zip(run.model.parameters(), run.before, strict=True):
        assert bool((p.detach() != b).all())
