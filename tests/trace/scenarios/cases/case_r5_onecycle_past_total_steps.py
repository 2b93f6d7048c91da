"""``OneCycleLR`` built with ``epochs=1, steps_per_epoch=len(loader)`` while training runs longer:
at the first batch of the second epoch the optimizer steps (the parameters move), then
``scheduler.step()`` raises ``ValueError: Tried to step 3 times. The specified number of total
steps is 2``.

Source: https://discuss.pytorch.org/t/how-to-use-onecyclelr/159945 ("I want to train on
CIFAR-10, suppose for 200 epochs ... If I want to train for 200 epochs, then epochs=200? Or this
is a parameter that runs the scheduler only for epoch and then it restarts? For example, If I
write epochs=10 inside the scheduler, but I train in total for 200").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://discuss.pytorch.org/t/how-to-use-onecyclelr/159945"
DESCRIPTION = "OneCycleLR(epochs=1) stepped into epoch 2: scheduler.step() raises after the step"
ASK = []
MUST = [
    [r"\braised\b", r"ValueError", r"exception", r"\berror\b"],
    [r"OneCycle", r"scheduler", r"total.?steps", r"Tried to step"],
]
MUST_NOT = [FALSE_OK, r"changed none", r"(no|none of the) parameters? (moved|changed)"]


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    g = torch.Generator().manual_seed(1)
    loader = [(torch.randn(8, 6, generator=g), torch.randint(0, 2, (8,), generator=g))] * 2
    scheduler = torch.optim.lr_scheduler.OneCycleLR(
        opt, max_lr=0.1, epochs=1, steps_per_epoch=len(loader)
    )
    for x, y in loader:  # epoch 1, unwatched
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
        scheduler.step()
    before = [p.detach().clone() for p in model.parameters()]
    x, y = loader[0]  # epoch 2, first batch
    error = None
    try:
        with watch(model) as w:
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            opt.step()
            scheduler.step()
    except ValueError as e:
        error = e
    return Run(w=w, model=model, error=error, before=before)


def truth(run):
    assert run.error is not None and "Tried to step 3 times" in str(run.error)
    for p, b in zip(run.model.parameters(), run.before, strict=True):
        assert not torch.equal(p.detach(), b)  # the optimizer step ran before the raise
