"""Control: mixup.  Each input is mixed with another of the batch, ``lam * x + (1 - lam) *
x[index]`` with ``lam`` from ``Beta(alpha, alpha)``, and the loss mixes the two labels' losses,
``lam * CE(pred, y_a) + (1 - lam) * CE(pred, y_b)``: the same output feeds two cross-entropies,
the targets are integer labels, and the loss cannot reach 0.  One SGD step, nothing wrong.

Source: https://github.com/CoffeeCatt/Other ("def mixup_data(x, y, alpha=1.0, use_cuda=True):
'''Returns mixed inputs, pairs of targets, and lambda'''"; "def mixup_criterion(criterion, pred,
y_a, y_b, lam): return lam * criterion(pred, y_a) + (1 - lam) * criterion(pred, y_b)").  The
Beta sample and the permutation come from seeded generators.
"""

import numpy as np
import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/CoffeeCatt/Other"
DESCRIPTION = "control: mixup inputs, lam * CE(pred, y_a) + (1 - lam) * CE(pred, y_b): healthy"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"broadcast",
    r"target[^\n]{0,60}(carr|sen)\w* gradient",
    r"(backward|passes)[^\n]{0,30}twice",
]


def mixup_data(x, y, alpha=1.0, rng=None, gen=None):
    lam = float(rng.beta(alpha, alpha)) if alpha > 0 else 1.0
    index = torch.randperm(x.size(0), generator=gen)
    mixed_x = lam * x + (1 - lam) * x[index, :]
    return mixed_x, y, y[index], lam


def mixup_criterion(criterion, pred, y_a, y_b, lam):
    return lam * criterion(pred, y_a) + (1 - lam) * criterion(pred, y_b)


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 4))
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(32, 12, generator=g), torch.randint(0, 4, (32,), generator=g)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    with watch(model) as w:
        opt.zero_grad()
        mixed_x, y_a, y_b, lam = mixup_data(x, y, 1.0, np.random.default_rng(2), g)
        pred = model(mixed_x)
        loss = mixup_criterion(nn.CrossEntropyLoss(), pred, y_a, y_b, lam)
        loss.backward()
        grads = {n: p.grad.clone() for n, p in model.named_parameters()}
        opt.step()
    soft = lam * F.one_hot(y_a, 4).float() + (1 - lam) * F.one_hot(y_b, 4).float()
    return Run(w=w, lam=lam, loss=loss.item(), pred=pred.detach(), soft=soft, grads=grads)


def truth(run):
    assert 0.0 < run.lam < 1.0
    # the mixed loss equals cross-entropy against the mixed (soft) labels
    assert abs(run.loss - F.cross_entropy(run.pred, run.soft).item()) < 1e-5
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
