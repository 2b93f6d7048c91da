"""A FixMatch step whose unlabelled loss is averaged over the pseudo-labels that were retained:
``(ce * mask).sum() / mask.sum()``, the cross-entropy of the strong view against the weak view's
arg-max, kept where the weak view's top probability reaches the threshold 0.95.  On the first steps
of a freshly initialised 10-class model no prediction reaches 0.95 (the top probabilities are 0.17
on average, 0.24 at most), the mask is all zero and the unlabelled term is ``0 / 0 = NaN``.  The
total loss is NaN, the backward of the division sends ``1 / 0`` times 0 down: every gradient of the
model is NaN, and the Adam step writes NaN into every weight.  Nothing raises.

Source: https://paperswithcode2.com/method/4742 ("FixMatch is an algorithm that first generates
pseudo-labels using the model's predictions on weakly-augmented unlabeled images.  For a given
image, the pseudo-label is only retained if the model produces a high-confidence prediction.  The
model is then trained to predict the pseudo-label when fed a strongly-augmented version of the same
image").  Adapted: the average taken over the retained pseudo-labels only (the page gives the
method, not that normalisation); 10 classes of 16-dimensional points around random centres, an MLP
``Linear(16, 64), Tanh, Linear(64, 10)``, 32 labelled and 96 unlabelled points (mu = 3), weak view =
small Gaussian noise, strong view = feature dropout and larger noise, Adam at 1e-3.
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://paperswithcode2.com/method/4742"
DESCRIPTION = "FixMatch unlabelled loss / mask.sum(): no prediction reaches 0.95, 0 / 0, NaN grads"
ASK = []
MUST = [
    [r"\bnan\b"],
    [
        r"\b0\s?/\s?0\b",
        r"divi\w* by (zero|0)\b",
        r"/ ?(zero|0)\b",
        r"\bdiv\w*",
        r"mask\w*",
        r"threshold",
        r"confiden\w*",
        r"pseudo",
        r"empty",
        r"\bcount\b",
    ],
]
MUST_NOT = [FALSE_OK, r"\bdead\b", r"requires_grad\s*(=|is|was)?\s*False"]
CLASSES, THRESHOLD = 10, 0.95


def data():
    g = torch.Generator().manual_seed(1)
    centres = 2.0 * torch.randn(CLASSES, 16, generator=g)
    y = torch.randint(0, CLASSES, (128,), generator=g)
    x = centres[y] + torch.randn(128, 16, generator=g)
    return x[:32], y[:32], x[32:]


def views(u):
    g = torch.Generator().manual_seed(2)
    weak = u + 0.05 * torch.randn(u.shape, generator=g)
    keep = (torch.rand(u.shape, generator=g) > 0.3).float()
    strong = u * keep + 0.5 * torch.randn(u.shape, generator=g)
    return weak, strong


def step(watch, normalise="retained"):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 64), nn.Tanh(), nn.Linear(64, CLASSES))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y, u = data()
    weak, strong = views(u)
    with watch(model) as w:
        optimizer.zero_grad()
        supervised = F.cross_entropy(model(x), y)
        with torch.no_grad():
            probs = model(weak).softmax(1)
            top, pseudo = probs.max(1)
            mask = (top >= THRESHOLD).float()
        ce = F.cross_entropy(model(strong), pseudo, reduction="none")
        if normalise == "retained":
            unsupervised = (ce * mask).sum() / mask.sum()
        else:  # 1 / (mu B), over every unlabelled example
            unsupervised = (ce * mask).mean()
        loss = supervised + unsupervised
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(
        w=w,
        model=model,
        loss=float(loss.detach()),
        supervised=float(supervised.detach()),
        unsupervised=float(unsupervised.detach()),
        top=top,
        mask=mask,
        grads=grads,
    )


def truth(run):
    assert float(run.top.max()) < THRESHOLD and float(run.mask.sum()) == 0.0
    assert torch.isnan(torch.tensor(run.unsupervised)) and torch.isnan(torch.tensor(run.loss))
    for n, g in run.grads.items():
        assert bool(torch.isnan(g).all()), n
    for n, p in run.model.named_parameters():
        assert bool(torch.isnan(p).all()), n
