"""A PointNet classifier whose global max pooling is taken over the feature axis instead of the
point axis: the shared per-point MLP (``Conv1d`` with kernel 1) gives features of shape ``(batch,
64, points)`` and the step takes ``features.max(dim=1)``, the largest feature of each point.  With
64 points and 64 features the result has the shape the head expects, so nothing raises: the head
reads a vector indexed by point, and the model is no longer invariant to the order of the points
(asserted: shuffling the points changes the logits).  Every gradient is finite and nonzero.

Source: https://visionbook.apartsin.com/part-3-deep-learning-for-vision/module-27-depth-3d-neural-scenes/section-27.3.html
("PointNet achieves this with two ideas: a shared per-point MLP that lifts each point into a feature
vector, and a symmetric pooling operation (a max over all points) that collapses those features into
one global descriptor immune to ordering"; "builds PointNet from scratch in PyTorch").  Adapted: 16
clouds of 64 points from 4 shapes (sphere, cube surface, cylinder, disc) with noise; ``Conv1d(3, 32,
1), Tanh, Conv1d(32, 64, 1), Tanh`` per point, the max, ``Linear(64, 32), Tanh, Linear(32, 4)``;
Adam at 1e-3.
"""

import math

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://visionbook.apartsin.com/part-3-deep-learning-for-vision/"
    "module-27-depth-3d-neural-scenes/section-27.3.html"
)
DESCRIPTION = "PointNet global max over dim=1 (features) not dim=2 (points): order-dependent"
ASK = []
MUST = [
    [
        r"max[^\n]{0,80}(dim|axis|channels?|features?)",
        r"(dim|axis)\s?=?\s?(1|2)",
        r"permutation",
        r"(order|ordering) of (the )?points",
        r"over (the )?(channels?|features?)",
        r"not (permutation[- ])?invariant",
    ]
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b", r"requires_grad\s*(=|is|was)?\s*False"]
POINTS, FEATURES = 64, 64


class PointNet(nn.Module):
    def __init__(self, pool_dim):
        super().__init__()
        self.pool_dim = pool_dim
        self.point_mlp = nn.Sequential(
            nn.Conv1d(3, 32, 1), nn.Tanh(), nn.Conv1d(32, FEATURES, 1), nn.Tanh()
        )
        self.head = nn.Sequential(nn.Linear(64, 32), nn.Tanh(), nn.Linear(32, 4))

    def forward(self, points):  # points: (batch, 3, N)
        return self.head(self.point_mlp(points).max(dim=self.pool_dim).values)


def clouds():
    g = torch.Generator().manual_seed(1)
    u = torch.rand(16, POINTS, 2, generator=g)
    theta, s = 2 * math.pi * u[..., 0], u[..., 1]
    sphere_dir = F.normalize(torch.randn(4, POINTS, 3, generator=g), dim=-1)
    cube = torch.rand(4, POINTS, 3, generator=g) * 2 - 1
    face = torch.randint(0, 3, (4, POINTS), generator=g)
    cube.scatter_(2, face[..., None], torch.sign(torch.randn(4, POINTS, 1, generator=g)))
    cylinder = torch.stack([theta[4:8].cos(), theta[4:8].sin(), 2 * s[4:8] - 1], -1)
    disc = torch.stack(
        [
            s[8:12].sqrt() * theta[8:12].cos(),
            s[8:12].sqrt() * theta[8:12].sin(),
            torch.zeros(4, POINTS),
        ],
        -1,
    )
    pts = torch.cat([sphere_dir, cube, cylinder, disc])
    pts = pts + 0.02 * torch.randn(16, POINTS, 3, generator=g)
    return pts.transpose(1, 2).contiguous(), torch.arange(4).repeat_interleave(4)


def step(watch, pool_dim=1):
    torch.manual_seed(0)
    model = PointNet(pool_dim)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    points, labels = clouds()
    points.requires_grad_(True)
    with watch(model) as w:
        optimizer.zero_grad()
        F.cross_entropy(model(points), labels).backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    with torch.no_grad():
        perm = torch.randperm(POINTS, generator=torch.Generator().manual_seed(2))
        gap = float((model(points) - model(points[:, :, perm])).abs().max())
    return Run(w=w, grads=grads, gap=gap, point_grad=points.grad.detach().clone())


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert run.gap > 1e-3  # the logits depend on the order of the points
