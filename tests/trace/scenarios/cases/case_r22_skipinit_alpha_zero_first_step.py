"""A healthy recipe that looks broken on its first step: residual blocks ``x + alpha * F(x)`` with
a learnable scalar ``alpha`` per block initialised to zero (SkipInit), so that every block starts
as the identity.  On the first step ``F``'s parameters get exactly zero gradient (the output does
not depend on them while ``alpha = 0``) and only the ``alpha``s, the stem and the head learn; after
that step the ``alpha``s are nonzero and on the second step every parameter gets a gradient.  Two
steps are watched; nothing is wrong.

Source: https://doraemonzzz.gitbook.io/transformer_evolution_paper/normalize_and_residual/002
("Batch Normalization Biases Residual Blocks Towards the Identity Function in Deep Networks";
``\\mathbf {x}_{i+1}=\\mathbf {x}_{i}+\\alpha_{i} F(\\mathbf {x}_{i})``; "思路和ReZero类似，用加权残差取代
Normalize": the idea is like ReZero's, a weighted residual in place of the normalisation).
Adapted: ``alpha`` initialised to 0 as in the paper (the stored page gives the formula only), a
``Linear(10, 16)`` stem, three blocks ``F = Linear(16, 16), Tanh, Linear(16, 16)``, a
``Linear(16, 3)`` head, Adam at 0.01, 128 examples.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://doraemonzzz.gitbook.io/transformer_evolution_paper/normalize_and_residual/002"
DESCRIPTION = "healthy: SkipInit x + alpha * F(x), alpha = 0: F's grads zero on step 1 only"
ASK = []
MUST = [[HEALTHY_OK, r"alpha", r"skip\s*init", r"rezero", r"zero[- ]init\w*", r"first step"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
    r"never (move|moved|moves|update|learn)",
]


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.f = nn.Sequential(nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 16))
        self.alpha = nn.Parameter(torch.zeros(()))

    def forward(self, x):
        return x + self.alpha * self.f(x)


class SkipInitNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Linear(10, 16)
        self.blocks = nn.Sequential(Block(), Block(), Block())
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        return self.head(self.blocks(torch.tanh(self.stem(x))))


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(128, 10, generator=g)
    return x, (x[:, :3] + 0.5 * x[:, 3:6]).argmax(1)


def step(watch):
    torch.manual_seed(0)
    model = SkipInitNet()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    x, y = data()
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    grads = []
    with watch(model) as w:
        for _ in range(2):
            optimizer.zero_grad()
            F.cross_entropy(model(x), y).backward()
            grads.append({n: p.grad.detach().clone() for n, p in model.named_parameters()})
            optimizer.step()
    return Run(w=w, model=model, before=before, grads=grads)


def truth(run):
    first, second = run.grads
    for n, g in first.items():
        if ".f." in n:
            assert bool((g == 0).all()), n  # alpha = 0: the branches get nothing at first
        else:
            assert bool(g.abs().sum() > 0), n  # the alphas, the stem and the head do
    for n, g in second.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    for n, p in run.model.named_parameters():
        assert not torch.equal(p.detach(), run.before[n]), n
