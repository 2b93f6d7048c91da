"""``scheduler.step()`` called before ``optimizer.step()`` in each iteration (the pre-1.1 order):
a ``StepLR`` with step size 1 and gamma 0.1 has already decayed the learning rate when the first
optimizer step runs, so the first update is made at 0.01 instead of the initial 0.1 (torch warns
"Detected call of lr_scheduler.step() before optimizer.step()") and the second at 0.001.

Source: https://runebook.dev/en/docs/pytorch/generated/torch.optim.lr_scheduler.lrscheduler
("Calling scheduler.step() before optimizer.step(): The scheduler adjusts the LR for the next
update before the current update has even happened. Always call optimizer.step() first").  (Not
round 3's ``.../LRScheduler.step`` page of the same site, which round 3 used for a scheduler
stepped per batch.)
"""

import warnings

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://runebook.dev/en/docs/pytorch/generated/torch.optim.lr_scheduler.lrscheduler"
DESCRIPTION = "scheduler.step() before optimizer.step(): the first update at lr 0.01, not 0.1"
ASK = []
MUST = [
    [r"schedul", r"lr_scheduler", r"StepLR"],
    [
        r"before[^\n]{0,40}optimizer",
        r"\border\b",
        r"skip",
        r"0\.01\b",
        r"decayed",
        r"initial (learning rate|lr)",
    ],
]
MUST_NOT = [FALSE_OK]
LR = 0.1


def step(watch, scheduler_first: bool = True):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.1)
    g = torch.Generator().manual_seed(1)
    batches = [(torch.randn(16, 4, generator=g), torch.randn(16, 1, generator=g)) for _ in range(2)]
    lrs, moved = [], []
    with watch(model) as w, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's "Detected call of lr_scheduler.step() before"
        for x, y in batches:
            opt.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            grad = model[2].bias.grad.clone()
            before = model[2].bias.detach().clone()
            if scheduler_first:
                sched.step()
            lrs.append(opt.param_groups[0]["lr"])
            opt.step()
            if not scheduler_first:
                sched.step()
            moved.append(((before - model[2].bias.detach()) / grad).item())
    return Run(w=w, model=model, lrs=lrs, moved=moved)


def truth(run):
    # the first update was made at the decayed rate, not at the initial 0.1
    assert abs(run.moved[0] - LR * 0.1) < 1e-6
    assert abs(run.lrs[0] - LR * 0.1) < 1e-9
