"""Control: ``optimizer = Adam(model.parameters())`` first, then ``model = model.to(...)`` --
here ``torch.float64``, the CPU stand-in for a device: ``Module.to`` converts the parameters in
place, the optimizer still holds the very same ``Parameter`` objects, and the step trains every
one of them.

Source: https://theneuralbase.com/pytorch/learn/intermediate/moving-model-and-data-to-device/
(its code builds ``optimizer = torch.optim.Adam(model.parameters())`` and then ``model =
model.to(device)``; "When moving models between devices midtraining, optimizer state must also be
moved").
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://theneuralbase.com/pytorch/learn/intermediate/moving-model-and-data-to-device/"
DESCRIPTION = "control: Adam built, then model.to(float64) before any step: same params, trains"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_NO_ZERO_GRAD,
    CLAIMS_ERROR,
    r"not (held|in (the|any) optimizer)",
    r"no optimizer",
    r"replaced",
    r"never (moved|updated|stepped)",
]


def step(watch, warm_steps=0):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(16, 5, generator=g), torch.randn(16, 1, generator=g)
    for _ in range(warm_steps):  # training in float32 before the move
        optimizer.zero_grad()
        F.mse_loss(model(x), y).backward()
        optimizer.step()
    ids = [id(p) for p in model.parameters()]
    model = model.to(torch.float64)  # the move, after the optimizer was built
    x, y = x.double(), y.double()
    before = [p.detach().clone() for p in model.parameters()]
    error = None
    try:
        with watch(model) as w:
            optimizer.zero_grad()
            F.mse_loss(model(x), y).backward()
            optimizer.step()
    except RuntimeError as e:
        error = e
    return Run(w=w, model=model, optimizer=optimizer, ids=ids, before=before, error=error)


def truth(run):
    assert run.error is None
    held = [id(p) for group in run.optimizer.param_groups for p in group["params"]]
    assert held == run.ids == [id(p) for p in run.model.parameters()]  # the same objects
    for p, b in zip(run.model.parameters(), run.before, strict=True):
        assert p.dtype == torch.float64
        assert p.grad is not None and bool(p.grad.abs().sum() > 0)
        assert not torch.equal(p.detach(), b)
