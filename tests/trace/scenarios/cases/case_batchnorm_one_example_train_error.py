"""BatchNorm1d in training mode on a batch of one example: the forward raises ValueError
("Expected more than 1 value per channel when training") inside the block; no backward runs.

Source: https://duoke360.com/post/34428 ("PyTorch ValueError: 期望每通道多于1个值的原因?": the last
incomplete batch of a DataLoader, or a single sample in train mode).
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://duoke360.com/post/34428"
DESCRIPTION = "BN train mode, batch of 1: forward raises ValueError in the block, no backward"
ASK = []
MUST = [
    [
        r"Expected more than 1 value",
        r"ValueError",
        r"\braised\b",
        r"exception",
        r"\berror\b",
        r"\bfail",
    ],
    [r"\bbn\b", r"BatchNorm", r"\bbatch\b", r"'1'"],
]
MUST_NOT = [FALSE_OK, r"'1'[^\n]*never called", r"BatchNorm1d\)? was never called"]


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, 3))
    x, y = torch.randn(1, 8), torch.tensor([1])
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    error = None
    try:
        with watch(model) as w:
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
    except ValueError as e:
        error = e
    return Run(w=w, model=model, error=error)


def truth(run):
    assert run.error is not None and "Expected more than 1 value per channel" in str(run.error)
    assert all(p.grad is None for p in run.model.parameters())
