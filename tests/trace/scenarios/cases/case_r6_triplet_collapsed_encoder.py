"""Batch-hard triplet loss on an encoder that has collapsed: its output layer maps every input to
the same vector (here its weight is all zero, the embeddings all equal its bias).  Every pairwise
distance is 0, the loss is ``relu(0 - 0 + margin)`` = the margin exactly, and its gradient is
zero for every parameter: the loss stays at the margin and nothing moves.

Source: https://quaterion.qdrant.tech/tutorials/triplet_loss_trick.html ("Triplet Loss: Vector
Collapse Prevention"; "if the encoder outputs the same vector for all the samples, then the loss
value will be equal to the margin value, and it will no longer improve").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://quaterion.qdrant.tech/tutorials/triplet_loss_trick.html"
DESCRIPTION = "batch-hard triplet loss, encoder outputs one vector for all: loss == margin, grads 0"
ASK = ["2.weight"]
MUST = [
    [
        r"collaps",
        r"(same|identical|equal|constant) (output|embedding|vector|row)",
        r"distances?[^\n]{0,40}(zero|\b0\b)",
        r"\bmargin\b",
        r"cdist",
        r"CdistBackward",
    ]
]
MUST_NOT = [FALSE_OK]
MARGIN = 0.5


def batch_hard_triplet(emb, labels, margin=MARGIN):
    dists = torch.cdist(emb, emb)
    same = labels[:, None] == labels[None, :]
    hardest_pos = (dists * same).max(dim=1).values
    hardest_neg = (dists + 1e6 * same).min(dim=1).values
    return F.relu(hardest_pos - hardest_neg + margin).mean()


def step(watch, collapsed: bool = True):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    if collapsed:
        with torch.no_grad():
            model[2].weight.zero_()  # every input maps to the bias: a collapsed encoder
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(24, 8, generator=g)
    labels = torch.arange(24) % 4
    before = [p.detach().clone() for p in model.parameters()]
    with watch(model) as w:
        opt.zero_grad()
        emb = model(x)
        loss = batch_hard_triplet(emb, labels)
        loss.backward()
        opt.step()
    return Run(w=w, model=model, loss=loss.item(), emb=emb.detach(), before=before)


def truth(run):
    assert torch.allclose(run.emb, run.emb[:1].expand_as(run.emb))  # one vector for all
    assert abs(run.loss - MARGIN) < 1e-6  # the loss is the margin
    for p, b in zip(run.model.parameters(), run.before, strict=True):
        assert p.grad is not None and not bool(p.grad.any())  # zero everywhere
        assert torch.equal(p.detach(), b)
