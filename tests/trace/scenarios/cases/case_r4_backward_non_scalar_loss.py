"""The loss is built with ``reduction='none'`` (one value per example, to weight them later) and
``loss.backward()`` is called on that vector: backward needs a scalar, or an explicit gradient,
and raises inside the block; no parameter gets a gradient and the step never runs.

Source: https://runebook.dev/en/docs/pytorch/generated/torch.tensor.backward ("This is the most
common error you'll encounter. The backward() method is designed to be called on a single
scalar value, like a loss. If you try to call it on a tensor with multiple elements (e.g., a
loss for a batch of data that hasn't been reduced to a single value), you'll get an error").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn

SOURCE = "https://runebook.dev/en/docs/pytorch/generated/torch.tensor.backward"
DESCRIPTION = "backward() on a per-example loss vector (reduction='none'): raises in the block"
ASK = []
MUST = [
    [r"\braised\b", r"exception", r"\berror\b", r"RuntimeError", r"implicitly created"],
    [r"scalar", r"reduc", r"per-?(example|sample|element)", r"\.(mean|sum)\(\)", r"\bshape\b"],
]
MUST_NOT = [FALSE_OK]


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    criterion = nn.MSELoss(reduction="none")
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(8, 5, generator=g), torch.randn(8, 1, generator=g)
    error = None
    try:
        with watch(model) as w:
            opt.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            opt.step()
    except RuntimeError as e:
        error = e
    return Run(w=w, model=model, error=error, loss_shape=tuple(loss.shape))


def truth(run):
    assert run.error is not None and "scalar outputs" in str(run.error)
    assert run.loss_shape == (8, 1)
    assert all(p.grad is None for p in run.model.parameters())
