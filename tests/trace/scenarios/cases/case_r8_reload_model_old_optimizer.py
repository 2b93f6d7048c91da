"""Resuming training from a checkpoint: the script trains a step, saves the model's and the
optimizer's ``state_dict``, then rebuilds the model (``model = nn.Sequential(...)`` again),
loads the saved weights into it and goes on training with the ``optimizer`` it already had.  That
optimizer holds the parameters of the model that was thrown away: the reloaded model gets a
gradient every step and never moves (the old model's parameters get none and stay put too), so
"the loss increases" or stays where it was.

Source: https://taourl.com/read-2613935.html ("Later, load only the model state_dict without
optimizer: model = nn.Sequential(nn.Linear(10, 5), nn.ReLU, nn.Linear(5, 1)); checkpoint =
torch.load('checkpoint.pth'); model.load_state_dict(checkpoint['model_state_dict'])", then the
training loop steps the optimizer built before; the page blames the missing optimizer state).
The checkpoint goes through an in-memory buffer instead of a file.
"""

import io

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://taourl.com/read-2613935.html"
DESCRIPTION = "model rebuilt and reloaded, old optimizer kept: it holds the discarded model"
ASK = ["0.weight"]
MUST = [
    [r"optimizer"],
    [
        r"not (held|in (the|any) optimizer)",
        r"no optimizer",
        r"(does not|doesn't|did not) hold",
        r"holds? none",
        r"never (moved|updated|stepped)",
        r"did not (move|change)",
        r"not (updated|optimi[sz]ed|stepped)",
    ],
]
MUST_NOT = [FALSE_OK]


def make():
    return nn.Sequential(nn.Linear(10, 5), nn.ReLU(), nn.Linear(5, 1))


def batches():
    g = torch.Generator().manual_seed(1)
    return [(torch.randn(32, 10, generator=g), torch.randn(32, 1, generator=g)) for _ in range(3)]


def step(watch, rebuild_optimizer: bool = False):
    torch.manual_seed(0)
    data = batches()
    model = make()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = data[0]
    optimizer.zero_grad()
    F.mse_loss(model(x), y).backward()
    optimizer.step()
    buffer = io.BytesIO()
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, buffer)
    buffer.seek(0)
    checkpoint = torch.load(buffer)

    model = make()  # later: rebuild the model and load the saved weights
    model.load_state_dict(checkpoint["model"])
    if rebuild_optimizer:  # the resume recipe: a new optimizer over the new model, then its state
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        optimizer.load_state_dict(checkpoint["optimizer"])
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    losses = []
    with watch(model) as w:
        for x, y in data[1:]:
            optimizer.zero_grad()
            loss = F.mse_loss(model(x), y)
            losses.append(loss.item())
            loss.backward()
            optimizer.step()
    held = {id(p) for group in optimizer.param_groups for p in group["params"]}
    return Run(
        w=w,
        model=model,
        before=before,
        held=[id(p) in held for p in model.parameters()],
        grads=[p.grad is not None and bool(p.grad.abs().sum() > 0) for p in model.parameters()],
        losses=losses,
    )


def truth(run):
    assert all(run.grads)  # the reloaded model gets gradients
    assert not any(run.held)  # the optimizer holds none of them
    for n, p in run.model.named_parameters():
        assert torch.equal(p.detach(), run.before[n]), n  # and none moves
