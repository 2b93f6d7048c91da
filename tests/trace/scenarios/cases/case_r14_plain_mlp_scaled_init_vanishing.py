"""A 20-block plain MLP, ``x = tanh(Linear(x))``, initialised with Kaiming-normal weights scaled by
``1 / sqrt(20)`` and zero biases (no normalisation), trained to pass its input through (``Y = X``,
MSE).  Each block multiplies the signal, forward and backward, by about ``sqrt(2) / sqrt(20)``: at
the watched first step the gradient reaching the first block (its bias's gradient) is some 10**-10
of the last block's, and the signal reaching the blocks' weights has shrunk as much forward, so
every block's weight gradient is below 1e-8 and the output barely depends on the input.  Every
gradient is finite; the early blocks' are too small to move them.  Nothing raises.

Source: https://www.orchestra-research.com/intro-to-ai-research/residual-connections ("we asked
two 20-layer networks ... Can you just pass the input X to the output Y ... PlainMLP:
x = ReLU(Linear(x)) ... ResMLP: x = x + ReLU(Linear(x)) ... Both models use identical
initialization: Kaiming He weights scaled by 1/sqrt(20), zero biases, no normalization layers";
"Layer 1: 10-19 (essentially zero)").  Adapted: ``tanh`` in place of the page's ReLU (with ReLU
the residual control has units inactive on the whole batch in its last blocks), width 32, a
linear read-out, one Adam step.
"""

import math

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://www.orchestra-research.com/intro-to-ai-research/residual-connections"
DESCRIPTION = "20 plain tanh blocks, Kaiming/sqrt(20) init: first block's grad ~1e-10 of the last's"
ASK = ["blocks.0.bias"]
MUST = [
    [r"vanish\w*", r"(tiny|very small|negligible)[^\n]{0,40}gradient", r"shrink\w*", r"10\*\*-\d"],
    [
        r"blocks\.\d",
        r"first (block|layer)",
        r"early (blocks|layers)",
        r"earl(y|ier) layers?",
        r"every (block|layer)",
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"explod\w*",
    r"no_grad",
    r"detach",
    r"not in (the |any )?optimizer",
]
DEPTH, WIDTH = 20, 32


class MLP(nn.Module):
    def __init__(self, residual: bool, scale: float, act=torch.tanh):
        super().__init__()
        self.residual, self.act = residual, act
        self.blocks = nn.ModuleList(nn.Linear(WIDTH, WIDTH) for _ in range(DEPTH))
        for lin in self.blocks:
            nn.init.kaiming_normal_(lin.weight, nonlinearity="relu")
            with torch.no_grad():
                lin.weight.mul_(scale)
            nn.init.zeros_(lin.bias)
        self.out = nn.Linear(WIDTH, WIDTH)

    def forward(self, x, keep=None):
        for lin in self.blocks:
            h = self.act(lin(x))
            if keep is not None:
                keep.append(h)
            x = x + h if self.residual else h
        return self.out(x)


def step(watch, residual: bool = False, scale: float = 1 / math.sqrt(DEPTH), act=torch.tanh):
    torch.manual_seed(0)
    model = MLP(residual, scale, act)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, WIDTH, generator=g)
    with torch.no_grad():  # the ReLU outputs at the first step, for the truth
        acts = []
        out0 = model(x, keep=acts)
        alive = min(int((h > 0).any(0).sum()) for h in acts)
    with watch(model) as w:
        opt.zero_grad()
        loss = F.mse_loss(model(x), x)
        loss.backward()
        opt.step()
    grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
    first = grads["blocks.0.bias"].norm().item()  # what reaches each block's output
    last = grads[f"blocks.{DEPTH - 1}.bias"].norm().item()
    return Run(
        w=w,
        loss=loss.item(),
        grads=grads,
        first=first,
        last=last,
        first_w=grads["blocks.0.weight"].norm().item(),
        alive=alive,
        out_ratio=(out0.std() / x.std()).item(),
    )


def truth(run):
    for n, gr in run.grads.items():
        assert bool(torch.isfinite(gr).all()), n
    assert run.first > 0
    assert run.first < 1e-8 * run.last  # the first block's gradient vanished
    assert run.last > 1e-2
    for i in range(DEPTH):  # the forward signal vanished too: weight gradients are ~0
        assert float(run.grads[f"blocks.{i}.weight"].norm()) < 1e-8
    assert run.out_ratio < 0.2
