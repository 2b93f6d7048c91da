"""A validation pass switches the model to ``eval()`` and the next training batch runs without
``model.train()``: the watched training step normalises with BatchNorm's running statistics
instead of the batch's, never updates them, and its Dropout drops nothing.  The gradients are
finite and nonzero, the step moves every parameter -- of a model in inference mode.

Source: https://earino.github.io/applied-deep-learning/pre-work/03_train_eval_mode/slides.html
("If you don't switch modes correctly, your metrics can be wrong and your deployed model
unreliable"; "Dropout is ON ... BatchNorm updates running statistics" in train mode).
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://earino.github.io/applied-deep-learning/pre-work/03_train_eval_mode/slides.html"
DESCRIPTION = "model.eval() for validation, model.train() forgotten: training step in eval mode"
ASK = []
MUST = [
    [
        r"\beval\b",
        r"eval(uation)? mode",
        r"inference mode",
        r"train(ing)? mode",
        r"\.training\b",
        r"model\.train\(\)",
        r"not (in )?train",
    ]
]
MUST_NOT = [FALSE_OK]


def _net():
    return nn.Sequential(
        nn.Linear(10, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Dropout(0.5), nn.Linear(32, 3)
    )


def step(watch):
    torch.manual_seed(0)
    model = _net()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(1)
    (x1, y1), (xv, yv), (x2, y2) = [
        (torch.randn(32, 10, generator=g) * 2 + 1, torch.randint(0, 3, (32,), generator=g))
        for _ in range(3)
    ]
    model.train()  # epoch 1, unwatched
    opt.zero_grad()
    F.cross_entropy(model(x1), y1).backward()
    opt.step()
    model.eval()  # validation
    with torch.no_grad():
        F.cross_entropy(model(xv), yv)
    # model.train() forgotten
    stats_before = model[1].running_mean.clone()
    with watch(model) as w:
        opt.zero_grad()
        out = model(x2)
        loss = F.cross_entropy(out, y2)
        loss.backward()
        opt.step()
    return Run(w=w, model=model, stats_before=stats_before, training=model.training, x2=x2)


def truth(run):
    assert run.training is False
    assert torch.equal(run.model[1].running_mean, run.stats_before)  # stats never updated
    for p in run.model.parameters():
        assert p.grad is not None and bool(p.grad.abs().sum() > 0)
