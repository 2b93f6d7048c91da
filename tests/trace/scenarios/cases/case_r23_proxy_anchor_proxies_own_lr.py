"""A healthy Proxy-Anchor metric-learning step: one learnable proxy per class in the loss, every
proxy used as an anchor (positive term over the proxies whose class is in the batch, negative
term over all), ``alpha = 32``, ``delta = 0.1``, and the proxies in their own parameter group at
100 times the network's learning rate, as proxy losses are commonly trained.  The proxies live
in the criterion, not in the watched network.  Every network parameter gets a finite, nonzero
gradient (each embedding is pulled to its proxy and pushed from the others), and so do the
proxies; the loss falls.

Source: https://ahmdtaha.medium.com/proxy-anchor-loss-for-deep-metric-learning-24f4a1509248
("Proxy-based losses compute class representative(s) during training. Then, samples are pulled
towards their class representatives and push away from different representatives"; "The proposed
Proxy-Anchor loss allows data points, in a training mini-batch, to be affected by each other
through its gradients").  Adapted: the paper's loss written out, a ``Linear(12, 32)``, ``Tanh``,
``Linear(32, 16)`` embedding network on 32 points from four clusters, AdamW at 1e-4 (proxies
1e-2).
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://ahmdtaha.medium.com/proxy-anchor-loss-for-deep-metric-learning-24f4a1509248"
DESCRIPTION = "healthy: Proxy-Anchor loss, proxies in the criterion at 100x the network's lr"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"\bdead\b",
    r"not in (the |any )?optimi[sz]er",
]


class ProxyAnchor(nn.Module):
    def __init__(self, classes, dim, alpha=32.0, delta=0.1):
        super().__init__()
        self.proxies = nn.Parameter(torch.randn(classes, dim))
        self.alpha, self.delta = alpha, delta

    def forward(self, emb, labels):
        cos = F.normalize(emb, dim=1) @ F.normalize(self.proxies, dim=1).T  # (batch, classes)
        pos = F.one_hot(labels, self.proxies.shape[0]).bool()
        pos_exp = torch.where(pos, torch.exp(-self.alpha * (cos - self.delta)), 0.0)
        neg_exp = torch.where(~pos, torch.exp(self.alpha * (cos + self.delta)), 0.0)
        with_pos = pos.any(0)
        pos_term = torch.log1p(pos_exp.sum(0))[with_pos].sum() / with_pos.sum()
        neg_term = torch.log1p(neg_exp.sum(0)).sum() / self.proxies.shape[0]
        return pos_term + neg_term


def data():
    g = torch.Generator().manual_seed(1)
    centers = 2 * torch.randn(4, 12, generator=g)
    labels = torch.arange(4).repeat_interleave(8)
    return centers[labels] + torch.randn(32, 12, generator=g), labels


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(12, 32), nn.Tanh(), nn.Linear(32, 16))
    criterion = ProxyAnchor(4, 16)
    optimizer = torch.optim.AdamW(
        [{"params": model.parameters()}, {"params": criterion.parameters(), "lr": 1e-2}], lr=1e-4
    )
    x, labels = data()
    with watch(model) as w:
        optimizer.zero_grad()
        loss = criterion(model(x), labels)
        loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        proxy_grad = criterion.proxies.grad.detach().clone()
        optimizer.step()
    with torch.no_grad():
        after = criterion(model(x), labels).item()
    return Run(w=w, model=model, grads=grads, proxy_grad=proxy_grad, loss=loss.item(),
               after=after, lrs=[g["lr"] for g in optimizer.param_groups])  # fmt: skip


def truth(run):
    assert run.lrs == [1e-4, 1e-2]
    for g in [*run.grads, run.proxy_grad]:
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
    assert bool((run.proxy_grad.abs().sum(1) > 0).all())  # every proxy is pulled or pushed
    assert run.after < run.loss
