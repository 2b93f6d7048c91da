"""The second stage of a two-step DeepONet training whose optimizer was copied from the first stage:
``torch.optim.Adam(model.trunk.parameters())``.  Stage one fitted the trunk (with a free coefficient
matrix ``A``) to the outputs at the query points and orthonormalised it (``T = QR``); stage two
freezes the trunk and trains the branch to output ``R A``.  The branch gets a finite, nonzero
gradient at each step but no optimizer holds it: it never moves, and since the optimizer's
``zero_grad`` only clears the trunk, the branch's ``.grad`` at the second step is the sum of both
steps' backward passes (twice the first).  The optimizer holds the frozen trunk, whose ``.grad``
stays None; its steps do nothing.  Nothing raises.

Source:
https://arxivlens.com/explained/on-the-training-and-generalization-of-deep-operator-networks-7599-1452700
("A DeepONet is a special kind of neural network made of two smaller networks: a branch that reads
the input information (the settings) and a trunk that knows how the output should vary across space
or time"; "This paper proposes a simpler, two-step approach: first train the trunk network to learn
how outputs change with location or time, then train the branch network to connect the input
settings to that known "output pattern""; "They also add a math technique called Gram-Schmidt
orthonormalization during training").  Adapted: the antiderivative operator on 32 random smooth
functions sampled at 20 sensors, 16 query points; a trunk ``Linear(1, 32), Tanh, Linear(32, 32),
Tanh, Linear(32, 16)`` fitted with ``A`` by 50 Adam steps before the watch, orthonormalised with
``torch.linalg.qr``; a branch ``Linear(20, 32), Tanh, Linear(32, 16)``; two watched stage-two steps
with Adam at 1e-3.
"""

import math

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://arxivlens.com/explained/on-the-training-and-generalization-of-deep-operator-networks-"
    "7599-1452700"
)
DESCRIPTION = "DeepONet stage 2: optimizer built on the frozen trunk, branch held by no optimizer"
ASK = ["branch.0.weight"]
MUST = [
    [
        r"not in (the |any )?optimi[sz]er",
        r"no optimi[sz]er (holds|held|steps?|updates?)",
        r"optimi[sz]er (does not|doesn't|never) (hold|contain|include|see|step|update)",
        r"(held|seen) by no optimi[sz]er",
    ],
    [
        r"optimi[sz]er[^\n]{0,80}trunk|trunk[^\n]{0,80}optimi[sz]er",
        r"frozen|requires_grad\s*=?\s*False",
        r"accumulat\w*|summ?(ed|s) (over )?(two|both|2) (backward|pass)",
        r"never (move[sd]?|updated?|stepped)|(did not|didn't) (move|change)",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b"]
SENSORS, QUERIES, FUNCTIONS, BASIS = 20, 16, 32, 16


class DeepONet(nn.Module):
    def __init__(self):
        super().__init__()
        self.branch = nn.Sequential(nn.Linear(SENSORS, 32), nn.Tanh(), nn.Linear(32, BASIS))
        self.trunk = nn.Sequential(
            nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, BASIS)
        )

    def forward(self, u, y):  # G(u)(y) = sum_k B_k(u) T_k(y)
        return self.branch(u) @ self.trunk(y).T


def data():
    g = torch.Generator().manual_seed(1)
    grid = torch.linspace(0, 1, 101)
    k = torch.arange(1, 5).float()
    coeffs = torch.randn(FUNCTIONS, 4, 2, generator=g) / k[:, None]
    u = (coeffs[..., 0, None] * torch.sin(math.pi * k[:, None] * grid)).sum(1) + (
        coeffs[..., 1, None] * torch.cos(math.pi * k[:, None] * grid)
    ).sum(1)
    antiderivative = torch.cumulative_trapezoid(u, grid, dim=-1)
    antiderivative = torch.cat([torch.zeros(FUNCTIONS, 1), antiderivative], 1)
    sensors = torch.linspace(0, 100, SENSORS).long()
    queries = torch.linspace(0, 100, QUERIES).long()
    return u[:, sensors], grid[queries][:, None], antiderivative[:, queries]


def stage_one(model, y, outputs):  # trunk and free coefficients, then T = QR
    coeffs = nn.Parameter(torch.zeros(BASIS, FUNCTIONS))
    optimizer = torch.optim.Adam([*model.trunk.parameters(), coeffs], lr=1e-2)
    for _ in range(50):
        optimizer.zero_grad()
        F.mse_loss(model.trunk(y) @ coeffs, outputs.T).backward()
        optimizer.step()
    optimizer.zero_grad()
    with torch.no_grad():
        _, r = torch.linalg.qr(model.trunk(y))
        return (r @ coeffs).T  # the branch's targets, one row per function


def step(watch, on_branch=False):
    torch.manual_seed(0)
    model = DeepONet()
    u, y, outputs = data()
    target = stage_one(model, y, outputs)
    model.trunk.requires_grad_(False)
    stage = model.branch if on_branch else model.trunk
    optimizer = torch.optim.Adam(stage.parameters(), lr=1e-3)
    held = {id(p) for group in optimizer.param_groups for p in group["params"]}
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    grads, losses = [], []
    with watch(model) as w:
        for _ in range(2):
            optimizer.zero_grad()
            loss = F.mse_loss(model.branch(u), target)
            loss.backward()
            losses.append(float(loss.detach()))
            grads.append({n: None if p.grad is None else p.grad.detach().clone()
                          for n, p in model.named_parameters()})  # fmt: skip
            optimizer.step()
    moved = {n for n, p in model.named_parameters() if not torch.equal(p.detach(), before[n])}
    held_names = {n for n, p in model.named_parameters() if id(p) in held}
    return Run(w=w, grads=grads, losses=losses, moved=moved, held=held_names)


def truth(run):
    assert all(math.isfinite(v) for v in run.losses)
    first, second = run.grads
    assert run.held == {n for n in first if n.startswith("trunk.")}
    assert not run.moved
    for n in first:
        if n.startswith("trunk."):
            assert first[n] is None and second[n] is None, n
        else:  # the branch: a gradient, no optimizer, accumulating
            assert bool(torch.isfinite(first[n]).all()) and bool(first[n].abs().sum() > 0), n
            assert torch.allclose(second[n], 2 * first[n], rtol=1e-5, atol=1e-8), n
