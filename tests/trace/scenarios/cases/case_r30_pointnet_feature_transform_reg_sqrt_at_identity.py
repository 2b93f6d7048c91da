"""A PointNet classifier with a feature transform network (T-Net) whose last layer is initialised as
in the reference implementation, weights and bias zero plus the identity, so the predicted ``16 x
16`` transform ``A`` is exactly the identity at the start.  The orthogonality regularizer is written
by hand as a Frobenius norm, ``sqrt(sum((A A^T - I)^2))``, not squared.  At ``A = I`` that is
``sqrt(0)``: the forward is 0 (the loss is finite), but the backward multiplies ``d sqrt/dx = 1/(2
sqrt(0)) = inf`` by the zero gradient of the square, NaN. The NaN reaches the T-Net's parameters
and, through the T-Net's input, the point MLP before it; the layers after the transform (the second
point MLP and the head) get finite gradients.  Adam writes the NaN into those parameters, and on the
second step the forward, the loss and every gradient are NaN. Nothing raises.

Source: https://sekirorong.notion.site/b8ce6aa235204ec484109db29481531d ("PointNet: Deep Learning on
Point Sets for 3D Classification and Segmentation"; "Joint Alignment Network"; "Invariance under
transformations"; "We predict an affine transformation matrix by a mini-network").  Adapted: the
paper's regularizer ``||I - A A^T||_F^2`` written as the unsquared norm by hand; 16 clouds of 64
points in 3 classes (a sphere, a flat disc, a line, each rotated at random), ``Conv1d(3, 16, 1),
Tanh`` before the transform, a T-Net ``Conv1d(16, 32, 1), Tanh``, max over points, ``Linear(32, 32),
Tanh, Linear(32, 256)`` (zero weights and bias, plus the identity), ``Conv1d(16, 32, 1), Tanh``
after it, max over points, ``Linear(32, 3)``, regularizer weight 1e-3, Adam at 1e-3.
"""

import math

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://sekirorong.notion.site/b8ce6aa235204ec484109db29481531d"
DESCRIPTION = "PointNet T-Net reg sqrt(sum((AA^T - I)^2)) with A = I at init: sqrt'(0), NaN grads"
ASK = []
MUST = [
    [r"\bnan\b|non-?finite"],
    [
        r"sqrt|square root",
        r"\bnorm\b|frobenius",
        r"regulari[sz]\w*|orthogonal\w*",
        r"identity",
        r"(at|of) (exactly )?(zero|0)\b",
    ],
]
MUST_NOT = [FALSE_OK, r"\bdead\b", r"requires_grad\s*(=|is|was)?\s*False"]
POINTS, K = 64, 16


class PointNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.mlp1 = nn.Sequential(nn.Conv1d(3, K, 1), nn.Tanh())
        self.tnet_conv = nn.Sequential(nn.Conv1d(K, 32, 1), nn.Tanh())
        self.tnet_fc = nn.Sequential(nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, K * K))
        nn.init.zeros_(self.tnet_fc[2].weight)
        nn.init.zeros_(self.tnet_fc[2].bias)
        self.mlp2 = nn.Sequential(nn.Conv1d(K, 32, 1), nn.Tanh())
        self.head = nn.Linear(32, 3)

    def forward(self, points):  # (B, 3, N)
        x = self.mlp1(points)
        a = self.tnet_fc(self.tnet_conv(x).amax(2)).view(-1, K, K) + torch.eye(K)
        x = torch.bmm(a.transpose(1, 2), x)
        return self.head(self.mlp2(x).amax(2)), a


def reg_sqrt(a):
    d = torch.bmm(a, a.transpose(1, 2)) - torch.eye(K)
    return (d**2).sum((1, 2)).sqrt().mean()


def reg_squared(a):
    d = torch.bmm(a, a.transpose(1, 2)) - torch.eye(K)
    return (d**2).sum((1, 2)).mean()


def clouds():
    g = torch.Generator().manual_seed(1)
    labels = torch.arange(16) % 3
    pts = torch.randn(16, POINTS, 3, generator=g)
    pts[labels == 0] = pts[labels == 0] / pts[labels == 0].norm(dim=2, keepdim=True)
    pts[labels == 1, :, 2] = 0.05 * pts[labels == 1, :, 2]
    pts[labels == 2, :, 1:] = 0.05 * pts[labels == 2, :, 1:]
    rot, _ = torch.linalg.qr(torch.randn(16, 3, 3, generator=g))
    return torch.bmm(pts, rot).transpose(1, 2).contiguous(), labels


def step(watch, reg=reg_sqrt):
    torch.manual_seed(0)
    model = PointNet()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    points, labels = clouds()
    grads, losses, transforms = [], [], []
    with watch(model) as w:
        for _ in range(2):
            optimizer.zero_grad()
            logits, a = model(points)
            loss = F.cross_entropy(logits, labels) + 1e-3 * reg(a)
            loss.backward()
            grads.append({n: p.grad.detach().clone() for n, p in model.named_parameters()})
            losses.append(float(loss.detach()))
            transforms.append(a.detach())
            optimizer.step()
    return Run(w=w, model=model, grads=grads, losses=losses, transforms=transforms)


def truth(run):
    assert torch.equal(run.transforms[0], torch.eye(K).expand(16, K, K))  # exactly the identity
    assert math.isfinite(run.losses[0])  # sqrt(0) = 0 in the forward
    for n, g in run.grads[0].items():
        upstream = n.startswith(("mlp1", "tnet"))
        assert bool(torch.isnan(g).any()) == upstream, n
    assert math.isnan(run.losses[1])
    for n, g in run.grads[1].items():
        assert bool(torch.isnan(g).any()), n
