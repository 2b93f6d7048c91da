"""Control: CrossEntropyLoss(label_smoothing=0.1) over 10 classes on a model that already fits
its batch: the loss sits near its floor, the entropy of the smoothed targets (about 0.50 here;
the page's 0.544 spreads eps over the K - 1 wrong classes, PyTorch over all K), and cannot go
to zero.  The step is healthy: the gradients are small but finite and nonzero.

Source: https://mensfashionforless.com/ai/how-cross-entropy-loss-with-label-smoothing-works.php
("With label smoothing, the cross-entropy loss will not be zero, even when the model's
predicted probability distribution exactly matches the target distribution.  This behavior is
expected and intentional" ... "Training loss will not converge to zero").
"""

import math

import torch
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn

SOURCE = "https://mensfashionforless.com/ai/how-cross-entropy-loss-with-label-smoothing-works.php"
DESCRIPTION = "control: label_smoothing=0.1, 10 classes, batch fitted: loss at its floor, healthy"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_NO_ZERO_GRAD,
    r"vanish",
    r"all-zero",
    r"not (decreas|learn)",
    r"plateau",
    r"\bstuck\b",
]

K, EPS = 10, 0.1


def floor():
    """The entropy of PyTorch's smoothed target: 1 - eps + eps/K on the label, eps/K elsewhere."""
    hi, lo = 1 - EPS + EPS / K, EPS / K
    return -(hi * math.log(hi) + (K - 1) * lo * math.log(lo))


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(20, 64), nn.Tanh(), nn.Linear(64, K))
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(64, 20, generator=g), torch.randint(0, K, (64,), generator=g)
    criterion = nn.CrossEntropyLoss(label_smoothing=EPS)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(300):  # earlier epochs, unwatched: the batch is fitted
        opt.zero_grad()
        criterion(model(x), y).backward()
        opt.step()
    with watch(model) as w:
        opt.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        grads = [p.grad.clone() for p in model.parameters()]
        opt.step()
    accuracy = float((model(x).argmax(1) == y).float().mean())
    return Run(w=w, model=model, loss=loss.item(), grads=grads, accuracy=accuracy)


def truth(run):
    assert floor() - 1e-4 < run.loss < floor() + 0.05  # at the floor, not at zero
    assert run.accuracy == 1.0
    for g in run.grads:
        assert bool(torch.isfinite(g).all()) and bool((g != 0).any())
