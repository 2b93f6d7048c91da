"""StepLR(step_size=1, gamma=0.1), meant to decay the learning rate once an epoch, stepped
after every batch: after 8 batches the learning rate is 0.1 * 0.1**8 = 1e-9, and the 9th
batch's update, 1e-9 times gradients below 1, is far below float32's spacing at the weights:
the step leaves them where they were (a few near-zero biases move by ~1e-10).

Source: https://runebook.dev/en/docs/pytorch/generated/torch.optim.lr_scheduler.lrscheduler/torch.optim.lr_scheduler.LRScheduler.step
("Calling scheduler.step() inside the batch loop when using epoch-based schedulers (e.g.,
StepLR)" ... "The learning rate plummets to a very small value too quickly, and your model
stops learning").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://runebook.dev/en/docs/pytorch/generated/torch.optim.lr_scheduler.lrscheduler/"
    "torch.optim.lr_scheduler.LRScheduler.step"
)
DESCRIPTION = "StepLR(1, 0.1) stepped per batch: lr 1e-9 by batch 9, the step moves nothing"
ASK = []
MUST = [
    [
        r"did(n't| not) (move|change)",
        r"unchanged",
        r"not (moved|changed|updated)",
        r"no (visible )?(effect|change)",
        r"round(ed|s|ing)? (away|off)",
        r"barely (moved|changed)",
    ],
    [r"learning rate", r"\blr\b", r"schedul"],
]
MUST_NOT = [FALSE_OK]


def _net():
    return nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 4))


def _batches():
    g = torch.Generator().manual_seed(1)
    return [
        (torch.randn(16, 10, generator=g), torch.randint(0, 4, (16,), generator=g))
        for _ in range(9)
    ]


def step(watch, per_batch=True):
    torch.manual_seed(0)
    model = _net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.1)
    *first, last = _batches()
    for x, y in first:  # epoch 0, unwatched
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
        if per_batch:
            sched.step()
    if not per_batch:
        sched.step()  # end of epoch 0
    x, y = last
    before = [p.detach().clone() for p in model.parameters()]
    with watch(model) as w:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        grads = [p.grad.clone() for p in model.parameters()]
        lr = opt.param_groups[0]["lr"]
        opt.step()
        if per_batch:
            sched.step()
    return Run(w=w, model=model, before=before, grads=grads, lr=lr)


def truth(run):
    assert abs(run.lr - 1e-9) < 1e-15
    for g in run.grads:
        assert bool((g != 0).any()) and bool(torch.isfinite(g).all())
    for p, b in zip(run.model.parameters(), run.before, strict=True):
        change = (p.detach() - b).abs().max()
        assert float(change) < 1e-8
    weights = [run.model[0].weight, run.model[2].weight]
    befores = [run.before[0], run.before[2]]
    for p, b in zip(weights, befores, strict=True):
        assert torch.equal(p.detach(), b)  # bit for bit
