"""Control: plain gradient descent written by hand: update under torch.no_grad() with
``p -= lr * p.grad`` and then ``p.grad = None``; no torch.optim optimizer.

Source: https://github.com/lhycms/Deep_Learning_Notes ("If you don't intend for the operation
to be differentiable, you can use torch.no_grad"), and the manual loop in
https://flisks.com/python-why-do-we-need-to-call-zero-grad-in-pytorch
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/lhycms/Deep_Learning_Notes"
DESCRIPTION = "control: hand-written SGD under no_grad, grads cleared after the update"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_ERROR,
    CLAIMS_NONFINITE,
    r"(reset|zeroed|set to None)[^\n]*(between|before)[^\n]*step",
    r"updated between the forward and the backward",
]


def _net():
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))


def step(watch):
    torch.manual_seed(0)
    model = _net()
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    with watch(model) as w:
        loss = F.mse_loss(model(x), y)
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= 0.1 * p.grad
                p.grad = None
    return Run(w=w, model=model, x=x, y=y)


def truth(run):
    torch.manual_seed(0)
    ref = _net()
    grads = torch.autograd.grad(F.mse_loss(ref(run.x), run.y), list(ref.parameters()))
    for p, p0, g in zip(run.model.parameters(), ref.parameters(), grads, strict=True):
        assert torch.allclose(p.detach(), p0.detach() - 0.1 * g, rtol=1e-5, atol=1e-7)
