"""A cosine classifier fed straight to softmax cross-entropy: the logits are the cosines between
the normalised features and the normalised class weights, with no scale factor.  Cosines lie in
``[-1, 1]``, so with 10 classes no example's predicted probability can exceed ``e / (e + 9 / e)``
(0.451) and the cross-entropy cannot fall below ``log(1 + 9 e**-2)`` (0.797) even for a perfect
classifier: the loss keeps a large gradient that cannot be driven down and the classes cannot be
separated with confidence.  Every gradient is finite and nonzero; nothing raises.

Source: https://vietanh.dev/glossary/cosine%20normalization ("To bound dot product and decrease
the variance, Cosine Normalization uses cosine similarity or centered cosine similarity (Pearson
Correlation Coefficient) instead of dot products in neural networks"; "Cosine normalization bounds
the pre-activation between -1 and 1").  Adapted: the normalisation in the output layer (a cosine
classifier) of a ``Linear(20, 64), Tanh, Linear(64, 32)`` encoder, 10 classes from a fixed linear
teacher, 256 examples, Adam at 1e-3.
"""

import math

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://vietanh.dev/glossary/cosine%20normalization"
DESCRIPTION = "cosine classifier without a scale: logits in [-1, 1], CE floor 0.797 for 10 classes"
ASK = []
MUST = [
    [
        r"scal(e|ing)",
        r"temperature",
        r"bounded",
        r"\[-1, ?1\]",
        r"(between|within) -1 and (\+)?1",
        r"\bs ?= ?\d",
    ]
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"\bdead\b",
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
]
CLASSES = 10


class CosineClassifier(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale
        self.encoder = nn.Sequential(nn.Linear(20, 64), nn.Tanh(), nn.Linear(64, 32))
        self.weight = nn.Parameter(torch.randn(CLASSES, 32) * 0.1)

    def forward(self, x):
        f = F.normalize(self.encoder(x), dim=1)
        return self.scale * f @ F.normalize(self.weight, dim=1).t()


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(256, 20, generator=g)
    teacher = torch.randn(20, CLASSES, generator=g)
    return x, (x @ teacher).argmax(1)


def step(watch, scale=1.0):
    torch.manual_seed(0)
    model = CosineClassifier(scale)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = data()
    with watch(model) as w:
        optimizer.zero_grad()
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, logits=logits.detach(), loss=loss.item(), grads=grads, scale=scale)


def floor(scale):
    """The lowest cross-entropy any example can reach: own logit ``scale``, the others ``-scale``."""
    return math.log(1 + (CLASSES - 1) * math.exp(-2 * scale))


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert float(run.logits.abs().max()) <= 1 + 1e-6
    assert floor(1.0) > 0.79 and run.loss > floor(1.0)
    assert float(F.softmax(run.logits, 1).max()) <= math.e / (math.e + 9 / math.e) + 1e-6
