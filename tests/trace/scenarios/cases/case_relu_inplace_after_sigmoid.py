"""nn.ReLU(inplace=True) right after a Sigmoid: Sigmoid saved its output for its backward and
the in-place ReLU overwrites it; the backward raises.

Source: https://taourl.com/read-2140379.html ("Some PyTorch layers (e.g., ReLU(inplace=True))
use inplace operations. Disable them during training").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn

SOURCE = "https://taourl.com/read-2140379.html"
DESCRIPTION = "ReLU(inplace=True) after Sigmoid overwrites its saved output: backward raises"
ASK = []
MUST = [
    [r"in-?place", r"modified"],
    [r"sigmoid", r"relu", r"'1'", r"'2'"],
]
MUST_NOT = [FALSE_OK]


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.Sigmoid(), nn.ReLU(inplace=True), nn.Linear(8, 1))
    x = torch.randn(4, 6)
    error = None
    try:
        with watch(model) as w:
            model(x).sum().backward()
    except RuntimeError as e:
        error = e
    return Run(w=w, model=model, error=error)


def truth(run):
    assert run.error is not None and "inplace operation" in str(run.error)
    assert run.model[0].weight.grad is None
