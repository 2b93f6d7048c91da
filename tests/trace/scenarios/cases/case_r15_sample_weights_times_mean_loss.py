"""Per-sample weights applied to a loss that was already averaged: ``loss_values =
criterion(output, target)`` with the default ``reduction='mean'`` is one number, ``loss_values *
weights`` broadcasts it over the 10 weights and ``torch.mean`` gives ``mean(weights) * loss``.
Every sample keeps the same weight: the gradient is exactly ``mean(w)`` times the unweighted one,
not the weighted one (sample 10, weight 1.0, counts no more than sample 1, weight 0.1).  Every
gradient is finite and nonzero; nothing raises.

Source: https://www.truegeometry.com/api/exploreHTML?query=PyTorch%2FTensorFlow+sample+weighting
("b) Manual Weighting (Older PyTorch versions or more control)": ``criterion = nn.MSELoss()`` ...
``loss_values = criterion(output, target)  # Calculate individual sample losses`` ...
``weighted_loss_values = loss_values * weights``; ``loss = torch.mean(weighted_loss_values)``).
Adapted: the page's 10 samples and weights 0.1 to 1.0, on a small tanh classifier with
``nn.CrossEntropyLoss()`` (8 classes), the same mistake.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn

SOURCE = "https://www.truegeometry.com/api/exploreHTML?query=PyTorch%2FTensorFlow+sample+weighting"
DESCRIPTION = "sample weights multiply an already averaged loss: every sample weighted mean(w)"
ASK = []
MUST = [
    [
        r"reduction",
        r"(already |been )?(averaged|reduced|a scalar|scalar loss)",
        r"(sample|per-sample|per-example)[- ]weights?",
        r"broadcast\w*",
        r"mean\(w",
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"dead (units?|relu|neurons?)",
    r"no_grad",
    r"not in (the |any )?optimizer",
]
N, CLASSES = 10, 8


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, CLASSES))


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(N, 5, generator=g)
    target = torch.randint(0, CLASSES, (N,), generator=g)
    weights = torch.tensor([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0])
    return x, target, weights


def reference(x, target, weights):
    """Gradients of three losses on the same initial model: unweighted mean, per-sample weighted
    mean, and cross-entropy with ``weight=`` read as class weights."""
    out = {}
    for kind in ("plain", "per_sample", "class_weight"):
        model = make_model()
        logits = model(x)
        if kind == "plain":
            loss = nn.functional.cross_entropy(logits, target)
        elif kind == "per_sample":
            loss = (nn.functional.cross_entropy(logits, target, reduction="none") * weights).mean()
        else:
            loss = nn.functional.cross_entropy(logits, target, weight=weights[:CLASSES])
        out[kind] = torch.autograd.grad(loss, list(model.parameters()))
    return out


def run_weighted(watch, weighting):
    model = make_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, target, weights = data()
    if weighting == "class_weight":  # the forum's reading: weight= as one weight per sample
        x, target, weights = x[:CLASSES], target[:CLASSES], weights[:CLASSES]
    with watch(model) as w:
        optimizer.zero_grad()
        output = model(x)
        if weighting == "times_mean":
            criterion = nn.CrossEntropyLoss()
            loss_values = criterion(output, target)  # one number: the mean
            loss = torch.mean(loss_values * weights)
        elif weighting == "none":
            criterion = nn.CrossEntropyLoss(reduction="none")
            losses = criterion(output, target)
            loss = (losses * weights).mean()
        else:
            criterion = nn.CrossEntropyLoss(weight=weights)
            loss = criterion(output, target)
        loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    return Run(w=w, grads=grads, ref=reference(x, target, weights), weights=weights, target=target)


def step(watch):
    return run_weighted(watch, "times_mean")


def same(a, b):
    return all(torch.allclose(u, v, atol=1e-7) for u, v in zip(a, b, strict=True))


def truth(run):
    for g in run.grads:
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
    scaled = [float(run.weights.mean()) * g for g in run.ref["plain"]]
    assert same(run.grads, scaled)  # every sample weighted mean(w) = 0.55
    assert not same(run.grads, run.ref["per_sample"])
