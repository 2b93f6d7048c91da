"""Control, a recipe: an embedding network trained with an ArcFace head. Embeddings and class
weights are L2-normalised, the target class's logit is ``s * cos(theta + m)`` (with the usual
fallback ``cos(theta) - m sin(m)`` past ``theta + m > pi``) and the others ``s * cos(theta)``, with
``s = 30`` and ``m = 0.5``; ``theta = acos(cos)`` on the cosine clamped to ``[-1 + 1e-7, 1 - 1e-7]``,
which no cosine comes near here (the largest is 0.58). The first loss (about 23) is far above
``log 5``, as a scaled margin loss starts; it is finite, and every gradient is finite and nonzero.

Source: https://www.johntrimble.com/posts/from-softmax-to-arcface ("how ArcFace, ArcFace: Additive
Angular Margin Loss for Deep Face Recognition (Deng et al., 2022), addresses the problem with an
additive angular margin loss that forces better separation between classes"; "we'll use the first
five classes of MNIST"; "a simple embedding network that outputs 2-dimensional embeddings").
Adapted: 5 synthetic classes of 20-dimensional inputs, a tanh MLP to 16-dimensional embeddings (2-D
ones put a cosine within 1e-6 of 1 at initialisation, next to the singularity of acos), SGD.
"""

import math

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://www.johntrimble.com/posts/from-softmax-to-arcface"
DESCRIPTION = "control: ArcFace head (s 30, m 0.5) on 2-D embeddings: large first loss, healthy"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"explod\w*"]
S, M, CLASSES = 30.0, 0.5, 5


class ArcFace(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Sequential(nn.Linear(20, 32), nn.Tanh(), nn.Linear(32, 16))
        self.weight = nn.Parameter(torch.randn(CLASSES, 16))

    def cosines(self, x):
        return F.normalize(self.embed(x)) @ F.normalize(self.weight).t()

    def forward(self, x, y):
        cos = self.cosines(x)
        theta = torch.acos(cos.clamp(-1 + 1e-7, 1 - 1e-7))
        target = torch.where(theta + M < math.pi, torch.cos(theta + M), cos - M * math.sin(M))
        one_hot = F.one_hot(y, CLASSES).bool()
        return S * torch.where(one_hot, target, cos)


def data():
    g = torch.Generator().manual_seed(1)
    centers = 2 * torch.randn(CLASSES, 20, generator=g)
    y = torch.randint(0, CLASSES, (64,), generator=g)
    return centers[y] + torch.randn(64, 20, generator=g), y


def step(watch):
    torch.manual_seed(0)
    model = ArcFace()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = data()
    with watch(model) as w:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x, y), y)
        loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    return Run(w=w, x=x, y=y, loss=loss.item(), grads=grads)


def truth(run):
    torch.manual_seed(0)
    model = ArcFace()
    with torch.no_grad():
        cos = model.cosines(run.x)
    assert float(cos.abs().max()) < 0.9  # far from the clamp and from acos's singularity
    assert 2 * math.log(CLASSES) < run.loss < float("inf")  # large, finite
    for g in run.grads:
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
