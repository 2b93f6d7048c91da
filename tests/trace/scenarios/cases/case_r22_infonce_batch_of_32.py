"""The control of ``infonce_batch_of_one_zero_loss``: the same in-batch-negatives InfoNCE loss and
encoder on a batch of 32 pairs.  Each query's 31 other positives are its negatives, the ``32 x 32``
cross-entropy is positive (about ``log 32`` at the start, less because the pairs are close), and
every parameter gets a finite, nonzero gradient and moves.

Source: https://www.cruxible.dev/learn/ml55-contrastive-learning ("The InfoNCE loss ... treats the
problem as picking the true positive out of a batch"; "Because every other item in the batch acts
as a negative, large batches give more negatives and stronger signal").  Adapted: the bug's
``infonce_loss`` (nlpcitations' code), shared encoder ``Linear(12, 16)``, ``Tanh``, ``Linear(16,
8)``, 32 pairs (a point and the same point plus noise of 0.1), SGD at 0.1.
"""

import math

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://www.cruxible.dev/learn/ml55-contrastive-learning"
DESCRIPTION = "control: InfoNCE with in-batch negatives on 32 pairs: every parameter trains"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR, r"all[- ]zero", r"\bzero grad\w*", r"\bdead\b"]


def infonce_loss(query_embs, pos_embs, temperature=0.05):
    q = F.normalize(query_embs, dim=-1)
    p = F.normalize(pos_embs, dim=-1)
    sim = torch.matmul(q, p.T) / temperature
    labels = torch.arange(len(q))
    return F.cross_entropy(sim, labels), sim


def data(n):
    g = torch.Generator().manual_seed(1)
    x = torch.randn(n, 12, generator=g)
    return x, x + 0.1 * torch.randn(n, 12, generator=g)


def step(watch, batch=32):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(12, 16), nn.Tanh(), nn.Linear(16, 8))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    queries, positives = data(batch)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    with watch(model) as w:
        optimizer.zero_grad()
        loss, sim = infonce_loss(model(queries), model(positives))
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, model=model, loss=loss.item(), sim=sim.detach(), grads=grads, before=before)


def truth(run):
    assert tuple(run.sim.shape) == (32, 32)
    assert 0.0 < run.loss < math.log(32)
    params = dict(run.model.named_parameters())
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        assert not torch.equal(params[n].detach(), run.before[n]), n
