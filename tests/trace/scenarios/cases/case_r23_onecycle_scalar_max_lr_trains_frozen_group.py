"""Differential learning rates with the "pretrained" body frozen by a learning rate of 0 in its
own parameter group, then ``OneCycleLR(optimizer, max_lr=0.01, ...)`` with one number for
``max_lr``.  The scheduler writes its schedule into every group: at construction the body's
group gets ``lr = max_lr / div_factor = 4e-4`` like the head's, and the step moves the body it was
meant to keep.  torch accepts the scalar without a warning.  Every gradient is finite and
nonzero; nothing raises.

Source: https://forums.fast.ai/t/lesson-2-differential-learning-rates/15135 ("by training all of
your layers with the same learning rate, you might break the base of your network and actually
get worse performance (this happens to me all the time when I forgot to pass an array of
learning rates instead of just one)"; "the earlier groups of layers ... are trained with a very
low learning rate").  Adapted: torch's ``OneCycleLR`` for fastai's schedule, the body's group at
``lr = 0``, a ``Linear(10, 32)``, ``Tanh``, ``Linear(32, 32)``, ``Tanh`` body and ``Linear(32,
3)`` head, SGD with momentum 0.9, 100 total steps, the first one watched, 64 examples.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://forums.fast.ai/t/lesson-2-differential-learning-rates/15135"
DESCRIPTION = "OneCycleLR(max_lr=scalar) overwrites the lr=0 'frozen' body group: the body trains"
ASK = []
MUST = [
    [r"OneCycle\w*", r"schedul\w*", r"max_lr"],
    [
        r"body",
        r"group 0",
        r"first (param(eter)? )?group",
        r"(overrid|overwrit|replac|reset)\w*",
        r"(lr|learning rate)\s*(of|=|is)?\s*0\b",
        r"frozen",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"all[- ]zero", r"\bzero grad\w*"]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh())
        self.head = nn.Linear(32, 3)

    def forward(self, x):
        return self.head(self.body(x))


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 10, generator=g)
    return x, (x[:, :3] + 0.5 * x[:, 3:6]).argmax(1)


def step(watch, max_lr=0.01):
    torch.manual_seed(0)
    model = Net()
    groups = [
        {"params": model.body.parameters(), "lr": 0.0},  # "frozen"
        {"params": model.head.parameters(), "lr": 0.01},
    ]
    optimizer = torch.optim.SGD(groups, lr=0.01, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=max_lr, total_steps=100)
    x, y = data()
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    lrs = [g["lr"] for g in optimizer.param_groups]
    with watch(model) as w:
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    scheduler.step()
    return Run(w=w, model=model, before=before, grads=grads, lrs=lrs)


def truth(run):
    assert run.lrs[0] > 0 and abs(run.lrs[0] - run.lrs[1]) < 1e-12  # the body's 0 overwritten
    for n, p in run.model.named_parameters():
        assert not torch.equal(p.detach(), run.before[n]), n  # the body moved too
        g = run.grads[n]
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
