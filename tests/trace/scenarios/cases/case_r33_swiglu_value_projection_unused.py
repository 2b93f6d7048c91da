"""A feed-forward block with SwiGLU written from the usual two-projection recipe, ``a = linA(x)``,
``gate = a * sigmoid(a)``, whose return line reads ``gate * self.linA(x)`` where ``self.linB(x)``
was meant: the block computes ``swish(linA(x)) * linA(x)``, the value projection ``linB`` is built,
counted and handed to the optimizer, and is never called.  Its weight and bias get no gradient
(``.grad`` stays None) on every step; the optimizer skips them.  Nothing raises; every gradient that
exists is finite and the loss goes down.

Source: https://fnl.es/Science/Machine+Learning/Deep+Learning/SwiGLU+in+PyTorch ("A Swich-gated
linear unit takes two linear projections A and B of the input: A drives the Swish gate and B
modulates the actual value stream"; its module: ``self.linA = nn.Linear(dim_in, dim_out)``,
``self.linB = nn.Linear(dim_in, dim_out)``, ``gate = a * torch.sigmoid(a)``, ``return gate *
self.linB(x)``).  Adapted: an input ``Linear(8, 16)``, two pre-norm residual SwiGLU blocks (16 to
32 and back through a ``Linear(32, 16)``), a ``Linear(16, 1)`` head, a regression of a product of
inputs, AdamW at 1e-3.
"""

import math

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://fnl.es/Science/Machine+Learning/Deep+Learning/SwiGLU+in+PyTorch"
DESCRIPTION = "SwiGLU returns gate * linA(x) (typo for linB): linB never called, no gradient"
ASK = ["blocks.0.swiglu.linB.weight"]
MUST = [
    [r"linB", r"value (projection|stream|branch)"],
    [
        r"never (called|used|run)",
        r"not (called|used)",
        r"unused",
        r"no grad\w*",
        r"\bNone\b",
        r"not (in|part of) the (graph|forward)",
        r"does not reach",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b", r"requires_grad\s*(=|is|was)?\s*False"]


class SwiGLU(nn.Module):
    def __init__(self, dim_in, dim_out, typo):
        super().__init__()
        self.linA = nn.Linear(dim_in, dim_out)
        self.linB = nn.Linear(dim_in, dim_out)
        self.typo = typo

    def forward(self, x):
        a = self.linA(x)
        gate = a * torch.sigmoid(a)
        return gate * (self.linA(x) if self.typo else self.linB(x))


class Block(nn.Module):
    def __init__(self, typo):
        super().__init__()
        self.norm = nn.LayerNorm(16)
        self.swiglu = SwiGLU(16, 32, typo)
        self.down = nn.Linear(32, 16)

    def forward(self, x):
        return x + self.down(self.swiglu(self.norm(x)))


class Net(nn.Module):
    def __init__(self, typo):
        super().__init__()
        self.inp = nn.Linear(8, 16)
        self.blocks = nn.Sequential(Block(typo), Block(typo))
        self.head = nn.Linear(16, 1)

    def forward(self, x):
        return self.head(self.blocks(self.inp(x))).squeeze(-1)


def step(watch, typo=True):
    torch.manual_seed(0)
    model = Net(typo)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 8, generator=g)
    y = x[:, 0] * x[:, 1] + x[:, 2]
    losses = []
    with watch(model) as w:
        for _ in range(2):
            optimizer.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            losses.append(float(loss.detach()))
    return Run(
        w=w,
        losses=losses,
        grads={n: None if p.grad is None else p.grad.detach().clone()
               for n, p in model.named_parameters()},
        held={id(p) for group in optimizer.param_groups for p in group["params"]},
        ids={n: id(p) for n, p in model.named_parameters()},
    )  # fmt: skip


def truth(run):
    assert all(math.isfinite(v) for v in run.losses) and run.losses[1] < run.losses[0]
    for n, g in run.grads.items():
        assert run.ids[n] in run.held, n
        if ".linB." in n:
            assert g is None, n
        else:
            assert g is not None and bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
