"""Control: a training step of a torch.compile'd model (backend "eager"); the gradients are
those of the eager model.

Source: https://github.com/pytorch/pytorch/issues/132929 ("Compile + torch.autograd.grad returns
no gradients": the maintainers explain that a compiled region only knows gradients of its outputs
with respect to its inputs and parameters -- which is what an ordinary .backward() needs).
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/pytorch/pytorch/issues/132929"
DESCRIPTION = "control: torch.compile(backend='eager') model, ordinary backward; same grads"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, r"no gradient"]


def _net():
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))


def step(watch):
    torch.manual_seed(0)
    model = _net()
    compiled = torch.compile(model, backend="eager")
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with watch(compiled) as w:
        opt.zero_grad()
        loss = F.mse_loss(compiled(x), y)
        loss.backward()
        grads = [p.grad.clone() for p in model.parameters()]
        opt.step()
    return Run(w=w, model=model, x=x, y=y, grads=grads)


def truth(run):
    torch.manual_seed(0)
    ref = _net()
    expected = torch.autograd.grad(F.mse_loss(ref(run.x), run.y), list(ref.parameters()))
    for g, e in zip(run.grads, expected, strict=True):
        assert torch.allclose(g, e, rtol=1e-5, atol=1e-7)
