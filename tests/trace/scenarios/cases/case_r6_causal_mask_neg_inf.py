"""Control, a healthy step: a one-head causal self-attention layer whose future positions are
masked with ``masked_fill(mask == 0, float('-inf'))`` before the softmax.  Every row keeps at least
its own position, so no row is all -inf: the softmax gives exact zeros for the future, and every
gradient is finite and nonzero.

Source: https://sachinkalsi.github.io/blog/why-do-we-use-negative-inf-for-masking ("Why Setting
Scores to 0 Doesn't Work?"; "masked_scores = scores.masked_fill(mask == 0, torch.finfo(dtype).min)
# or float('-inf')"; "Future is successfully hidden!").
"""

import math

import torch
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://sachinkalsi.github.io/blog/why-do-we-use-negative-inf-for-masking"
DESCRIPTION = "control: causal attention masked with -inf (no fully masked row): finite gradients"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE]


class CausalSelfAttention(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        t = x.shape[1]
        scores = self.q(x) @ self.k(x).transpose(1, 2) / math.sqrt(x.shape[-1])
        mask = torch.tril(torch.ones(t, t))
        scores = scores.masked_fill(mask == 0, float("-inf"))
        return self.out(F.softmax(scores, dim=-1) @ self.v(x))


def step(watch):
    torch.manual_seed(0)
    model = CausalSelfAttention()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(4, 6, 8, generator=g), torch.randn(4, 6, 8, generator=g)
    with watch(model) as w:
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
    return Run(w=w, model=model, loss=loss.item())


def truth(run):
    assert math.isfinite(run.loss)
    for p in run.model.parameters():
        assert p.grad is not None and bool(torch.isfinite(p.grad).all())
        assert bool(p.grad.abs().sum() > 0)
        assert bool(torch.isfinite(p).all())
