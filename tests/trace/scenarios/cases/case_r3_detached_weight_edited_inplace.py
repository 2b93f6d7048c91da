"""Between the forward and the backward, the step logs a unit-norm copy of a layer's weight
made with w = model[2].weight.detach(); w.div_(w.norm()).  detach() shares the storage (and
the version counter) with the parameter: the in-place division rescales the weight itself,
which the backward saved, and loss.backward() raises "one of the variables needed for
gradient computation has been modified by an inplace operation".

Source: https://theneuralbase.com/pytorch/learn/beginner/detach-stopping-gradient-flow/
(".detach() does NOT copy data, only breaks the autograd graph; modifying detached tensor
inplace (e.g., x_detached.fill_(0)) modifies the original tensor's values.  Use
.clone().detach() when you need a true independent copy").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://theneuralbase.com/pytorch/learn/beginner/detach-stopping-gradient-flow/"
DESCRIPTION = "model[2].weight.detach().div_(norm) between forward and backward: backward raises"
ASK = []
MUST = [
    [r"in-?place", r"modified"],
    [r"2\.weight", r"'2'", r"\bweight\b"],
]
MUST_NOT = [FALSE_OK]


def _net():
    return nn.Sequential(nn.Linear(6, 12), nn.Tanh(), nn.Linear(12, 3))


def step(watch, clone=False):
    torch.manual_seed(0)
    model = _net()
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(16, 6, generator=g), torch.randint(0, 3, (16,), generator=g)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    logged, error = None, None
    before = model[2].weight.detach().clone()
    try:
        with watch(model) as w:
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            snapshot = model[2].weight.detach()
            if clone:
                snapshot = snapshot.clone()
            snapshot.div_(snapshot.norm())  # a unit-norm copy for the logs
            logged = snapshot.norm().item()
            loss.backward()
            opt.step()
    except RuntimeError as e:
        error = e
    return Run(w=w, model=model, error=error, logged=logged, before=before)


def truth(run):
    assert run.error is not None
    assert "modified by an inplace operation" in str(run.error)
    rescaled = run.before / run.before.norm()
    assert torch.allclose(run.model[2].weight.detach(), rescaled)  # the weight itself
