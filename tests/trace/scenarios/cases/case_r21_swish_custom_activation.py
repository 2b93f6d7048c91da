"""A healthy recipe: a custom activation written as a plain Python function, ``x *
torch.sigmoid(x)`` (swish / SiLU), in place of a built-in one.  Autograd differentiates it like any
other composition of tensor operations; no backward needs to be written, and the gradients equal
those of the same model with ``F.silu``.  Every gradient is finite and nonzero and every parameter
moves.

Source: https://errorhandle.ai/replacing-sigmoid-activation-with-custom-activation ("Swapping out
the sigmoid activation for a custom one"; ``def custom_activation(x): return x *
torch.sigmoid(x)``; ``self.fc1 = nn.Linear(10, 20)``, ``self.fc2 = nn.Linear(20, 1)``, ``x =
custom_activation(self.fc1(x))``; "Make sure it's differentiable").  Adapted: the page's model as
written, a regression target on 64 examples, MSE, SGD at 0.05.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://errorhandle.ai/replacing-sigmoid-activation-with-custom-activation"
DESCRIPTION = "healthy: custom activation x * sigmoid(x) as a Python function, grads as F.silu"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"\bdead\b",
    r"(no|without|missing) (a |custom )?backward",
]


def custom_activation(x):  # the page's function
    return x * torch.sigmoid(x)


class MyModel(nn.Module):
    def __init__(self, act=custom_activation):
        super().__init__()
        self.act = act
        self.fc1 = nn.Linear(10, 20)
        self.fc2 = nn.Linear(20, 1)

    def forward(self, x):
        x = self.act(self.fc1(x))
        x = self.fc2(x)
        return x


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 10, generator=g)
    return x, (x[:, :2].sum(1, keepdim=True)).sin()


def step(watch):
    torch.manual_seed(0)
    model = MyModel()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    x, y = data()
    before = [p.detach().clone() for p in model.parameters()]
    with watch(model) as w:
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    return Run(w=w, model=model, x=x, y=y, before=before, grads=grads)


def truth(run):
    torch.manual_seed(0)
    ref = MyModel(act=F.silu)  # the same weights, the built-in activation
    for r, b in zip(ref.parameters(), run.before, strict=True):
        assert torch.equal(r.detach(), b)
    ref_grads = torch.autograd.grad(F.mse_loss(ref(run.x), run.y), list(ref.parameters()))
    for g, r, b, p in zip(run.grads, ref_grads, run.before, run.model.parameters(), strict=True):
        assert torch.allclose(g, r, atol=1e-6)
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
        assert not torch.equal(p.detach(), b)
