"""A structure model trained with a pairwise-distance loss, the mean squared error between the
predicted and the true C-alpha distance matrices, with the distances written
``((x[:, :, None] - x[:, None]) ** 2).sum(-1).sqrt()`` over all pairs, the diagonal included.  The
forward is fine (the diagonal is 0 in both matrices and the loss is finite), but the backward of
``sqrt`` at 0 divides by ``2 sqrt(0) = 0``: the diagonal's incoming gradient is 0 (prediction equals
target there), ``0 / 0`` is NaN, and the NaN spreads through the coordinates to every parameter.
The loss is finite; every gradient is NaN.  Nothing raises.

Source: https://deepwiki.com/microsoft/foldingdiff/6.2-loss-functions ("pairwise_dist_loss | 3D
structure preservation | Rotation/translation invariant | Auxiliary geometric constraint";
"FoldingDiff implements three primary loss functions, each designed for specific aspects of protein
structure").  Adapted: 8 chains of 24 residues whose true C-alpha traces are random walks of 3.8
angstrom steps; a per-residue ``Linear(24, 64), Tanh, Linear(64, 64), Tanh, Linear(64, 3)`` reading a
one-hot residue type and a sinusoidal position; Adam at 1e-3.
"""

import math

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://deepwiki.com/microsoft/foldingdiff/6.2-loss-functions"
DESCRIPTION = "pairwise distance loss with sqrt over all pairs: sqrt'(0) on the diagonal, NaN grads"
ASK = []
MUST = [
    [r"\bnan\b"],
    [
        r"sqrt",
        r"square root",
        r"diagonal",
        r"(zero|0)[- ]distance",
        r"distance[^\n]{0,40}\b(zero|0)\b",
        r"\bi\s?==\s?j\b",
        r"self[- ]distance|itself",
        r"\b0\s?/\s?0\b",
    ],
]
MUST_NOT = [
    FALSE_OK,
    r"\bloss\b[^\n]{0,20}\b(is|was|became)\s+(nan|non-?finite|inf\w*)",
    r"\bdead\b",
    r"requires_grad\s*(=|is|was)?\s*False",
]
CHAINS, LENGTH = 8, 24


def chains():
    g = torch.Generator().manual_seed(1)
    steps = F.normalize(torch.randn(CHAINS, LENGTH, 3, generator=g), dim=-1) * 3.8
    coords = steps.cumsum(1)
    residue = torch.randint(0, 20, (CHAINS, LENGTH), generator=g)
    pos = torch.arange(LENGTH).float()[:, None] / LENGTH * torch.tensor([1.0, 2.0]) * math.pi
    position = torch.cat([pos.sin(), pos.cos()], 1).expand(CHAINS, LENGTH, 4)
    return torch.cat([F.one_hot(residue, 20).float(), position], -1), coords


def distances(x):
    return ((x[:, :, None] - x[:, None]) ** 2).sum(-1).sqrt()


def squared_distances(x):
    return ((x[:, :, None] - x[:, None]) ** 2).sum(-1)


def step(watch, squared=False):
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Linear(24, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 3)
    )
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    features, coords = chains()
    with watch(model) as w:
        optimizer.zero_grad()
        pred = model(features)
        if squared:
            loss = F.mse_loss(squared_distances(pred) / 100, squared_distances(coords) / 100)
        else:
            loss = F.mse_loss(distances(pred), distances(coords))
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, loss=float(loss.detach()), grads=grads)


def truth(run):
    assert math.isfinite(run.loss) and run.loss > 0
    for n, g in run.grads.items():
        assert bool(torch.isnan(g).all()), n
