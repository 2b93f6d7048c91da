"""A 20-block residual MLP, ``x = x + ReLU(Linear(x))`` (width 32, zero biases, no normalisation),
trained to pass its input through (``Y = X``, MSE), with its Kaiming-normal weights left unscaled
(no ``1 / sqrt(depth)`` factor).  Each block adds to the residual stream a term of about its own
size, so the stream roughly doubles in variance per block: at the first step the network's output
is some ten thousand times larger than its input, the MSE loss is above 10**8, and the first
block's weight gradient has a norm in the tens of millions.  Every gradient is finite; nothing
raises.

Source: https://k78ma.github.io/quartz/ML/Residual-Connections ("networks with residual links
suffer less from shattered gradients, allowing us to increase the depth of the network
significantly ... However, residual networks suffer from exploding gradients").  Adapted: 20
residual ReLU blocks with Kaiming weights and zero biases, the task ``Y = X`` and a linear
read-out, one Adam step; no control of its own.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://k78ma.github.io/quartz/ML/Residual-Connections"
DESCRIPTION = "20 residual ReLU blocks, unscaled Kaiming init: output x10000, gradients explode"
ASK = []
MUST = [
    [
        r"explod\w*",
        r"(very |too )?(large|huge)[^\n]{0,40}(gradient|activation|output|loss)",
        r"(gradient|activation|output|loss)[^\n]{0,40}(very |too )?(large|huge)",
        r"grow\w*",
        r"blow\w* up",
    ],
    [
        r"residual",
        r"skip",
        r"initiali[sz]\w*",
        r"\binit\b",
        r"scal(e|ing)",
        r"normali[sz]\w*",
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"vanish\w*",
    r"no_grad",
    r"not in (the |any )?optimizer",
]
DEPTH, WIDTH = 20, 32


class ResMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList(nn.Linear(WIDTH, WIDTH) for _ in range(DEPTH))
        for lin in self.blocks:
            nn.init.kaiming_normal_(lin.weight, nonlinearity="relu")
            nn.init.zeros_(lin.bias)
        self.out = nn.Linear(WIDTH, WIDTH)

    def forward(self, x):
        for lin in self.blocks:
            x = x + torch.relu(lin(x))
        return self.out(x)


def step(watch):
    torch.manual_seed(0)
    model = ResMLP()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, WIDTH, generator=g)
    with torch.no_grad():
        out_ratio = (model(x).std() / x.std()).item()
    with watch(model) as w:
        opt.zero_grad()
        loss = F.mse_loss(model(x), x)
        loss.backward()
        opt.step()
    grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
    return Run(w=w, loss=loss.item(), grads=grads, out_ratio=out_ratio)


def truth(run):
    assert run.out_ratio > 100  # the residual stream grew by two orders of magnitude
    assert run.loss > 1e8
    for n, gr in run.grads.items():
        assert bool(torch.isfinite(gr).all()), n
    assert float(run.grads["blocks.0.weight"].norm()) > 1e5
