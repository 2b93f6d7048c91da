"""Control: symmetric cross entropy with the one-hot label clamped to [1e-4, 1] before its ``log``,
as the authors' code does: ``log 0`` becomes the constant ``A = log(1e-4) = -9.2`` and the reverse
cross entropy ``-sum_k p_k * log(q_k)`` equals ``-A * (1 - p_y)``, bounded and smooth. The loss
``alpha * CE + beta * RCE`` and every gradient are finite and nonzero.

Source: https://ar5iv.labs.arxiv.org/html/1908.06112 ("Symmetric Cross Entropy for Robust Learning
with Noisy Labels": "boosting CE symmetrically with a noise robust counterpart Reverse Cross Entropy
(RCE)"; the paper truncates ``log 0`` to a constant A). Adapted: a tanh MLP classifier of 4
synthetic classes with 30% of the labels flipped, ``alpha = 0.1``, ``beta = 1``, the prediction
clamped to [1e-7, 1] and the one-hot label to [1e-4, 1].
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://ar5iv.labs.arxiv.org/html/1908.06112"
DESCRIPTION = "control: symmetric CE with the one-hot label clamped to 1e-4 before log: finite"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR]
ALPHA, BETA = 0.1, 1.0


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 10, generator=g)
    y = x[:, :4].argmax(1)
    flip = torch.rand(64, generator=g) < 0.3
    return x, torch.where(flip, torch.randint(0, 4, (64,), generator=g), y)


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 16), nn.Tanh(), nn.Linear(16, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = data()
    with watch(model) as w:
        optimizer.zero_grad()
        logits = model(x)
        ce = F.cross_entropy(logits, y)
        pred = F.softmax(logits, dim=1).clamp(min=1e-7, max=1.0)
        label_one_hot = F.one_hot(y, 4).float().clamp(min=1e-4, max=1.0)
        rce = -(pred * torch.log(label_one_hot)).sum(dim=1)
        loss = ALPHA * ce + BETA * rce.mean()
        loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    return Run(
        w=w, model=model, loss=loss.item(), rce=rce.detach(), pred=pred.detach(), y=y, grads=grads
    )


def truth(run):
    a = torch.log(torch.tensor(1e-4))
    p_y = run.pred.gather(1, run.y.unsqueeze(1)).squeeze(1)
    assert torch.allclose(run.rce, -a * (1 - p_y), atol=1e-4)  # log q_y = log 1 = 0
    assert run.loss == run.loss and run.loss < float("inf")
    for g in run.grads:
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
    assert all(bool(torch.isfinite(p).all()) for p in run.model.parameters())
