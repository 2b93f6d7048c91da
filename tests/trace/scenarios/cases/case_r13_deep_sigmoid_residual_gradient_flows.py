"""A healthy step checked with the page's gradient-flow sanity test: a 16-block MLP whose blocks are
``Linear -> Sigmoid -> Linear`` (default init) wrapped in skip connections, ``h = h + block(h)``.
Through the identity path the gradient reaches the first block at about the size it has at the
last (per-block weight-gradient norms within a factor of a few), whereas the same 16 blocks
stacked without the skips give the first block a gradient some 10**17 times smaller than the
last's (computed here for comparison, not stepped).  The watched step trains the residual network:
every gradient finite and nonzero, nothing vanishing.

Source: https://www.book-ai.org/books/deep-learning/chapter-08/section-06 ("Diagnose vanishing
gradients by analyzing how gradients shrink exponentially through layers"; "Apply skip
connections to create 'gradient highways' that enable very deep networks"; "Implement gradient
analysis and monitoring tools in PyTorch").  Adapted: the blocks' sizes and the depth.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://www.book-ai.org/books/deep-learning/chapter-08/section-06"
DESCRIPTION = "healthy: 16 sigmoid blocks with skip connections: first block's gradient not small"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"vanish\w*",
    r"explod\w*",
    r"all-zero",
    r"no gradient",
    r"saturat\w*",
]
DEPTH, WIDTH = 16, 16


class Net(nn.Module):
    def __init__(self, residual: bool = True):
        super().__init__()
        self.residual = residual
        self.blocks = nn.ModuleList(
            nn.Sequential(nn.Linear(WIDTH, WIDTH), nn.Sigmoid(), nn.Linear(WIDTH, WIDTH))
            for _ in range(DEPTH)
        )
        self.head = nn.Linear(WIDTH, 1)

    def forward(self, x):
        h = x
        for block in self.blocks:
            h = h + block(h) if self.residual else block(h)
        return self.head(h)


def first_last_ratio(model):
    first = model.blocks[0][0].weight.grad.norm()
    last = model.blocks[-1][0].weight.grad.norm()
    return (first / last).item()


def step(watch):
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, WIDTH, generator=g)
    y = torch.randn(64, 1, generator=g)
    torch.manual_seed(0)
    plain_net = Net(residual=False)  # for comparison only
    F.mse_loss(plain_net(x), y).backward()
    plain_ratio = first_last_ratio(plain_net)
    torch.manual_seed(0)
    model = Net(residual=True)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    with watch(model) as w:
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
    grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
    return Run(w=w, ratio=first_last_ratio(model), plain_ratio=plain_ratio, grads=grads)


def truth(run):
    assert run.plain_ratio < 1e-3  # without the skips the first block's gradient vanishes
    assert 0.1 < run.ratio < 10  # with them it does not
    for n, gr in run.grads.items():
        assert bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0), n
