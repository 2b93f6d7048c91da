"""A healthy step: TransE trained with the margin ranking loss. Entities and relations are vectors;
a triple (h, r, t) scores ``||e_h + w_r - e_t||``, each true triple is paired with a corrupted one
(its head or tail replaced by a random entity), and the loss is ``relu(margin + d_pos - d_neg)``. As
in the original algorithm the entity embeddings are renormalised to unit length under ``no_grad``
before the batch. Every pair is inside the margin at this point, every entity and relation row
appears in the batch and gets a finite nonzero gradient.

Source: https://ar5iv.labs.arxiv.org/html/1907.05336 ("TransE is the primary model among
translation-based embeddings and is well-known for its low complexity and high efficiency"; "Margin
Ranking Loss (MRL) has been one of the earlier loss functions which is widely used for training
TransE"). Adapted: 12 entities, 3 relations, 8 dimensions, 36 synthetic triples, margin 1, SGD.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://ar5iv.labs.arxiv.org/html/1907.05336"
DESCRIPTION = "healthy: TransE margin ranking loss, entities renormalised, corrupted triples"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all-zero",
    r"\b(zero|no) gradient",
    r"dead (units?|relu|neurons?)",
    r"(in-?place|no_grad)[^\n]{0,40}(modif|edit|overwr)",
]
ENTITIES, RELATIONS, DIM, MARGIN = 12, 3, 8, 1.0


class TransE(nn.Module):
    def __init__(self):
        super().__init__()
        self.ent = nn.Embedding(ENTITIES, DIM)
        self.rel = nn.Embedding(RELATIONS, DIM)

    def forward(self, h, r, t):
        return (self.ent(h) + self.rel(r) - self.ent(t)).norm(dim=1)


def triples():
    g = torch.Generator().manual_seed(1)
    h = torch.arange(36) % ENTITIES
    r = torch.randint(0, RELATIONS, (36,), generator=g)
    t = (h + 1 + r * 3) % ENTITIES
    corrupt = torch.randint(0, ENTITIES, (36,), generator=g)
    corrupt = torch.where(corrupt == t, (corrupt + 5) % ENTITIES, corrupt)
    head_side = torch.rand(36, generator=g) < 0.5
    nh = torch.where(head_side, corrupt, h)
    nt = torch.where(head_side, t, corrupt)
    return h, r, t, nh, nt


def step(watch):
    torch.manual_seed(0)
    model = TransE()
    nn.init.uniform_(model.rel.weight, -6 / DIM**0.5, 6 / DIM**0.5)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    h, r, t, nh, nt = triples()
    with watch(model) as w:
        with torch.no_grad():
            model.ent.weight.copy_(F.normalize(model.ent.weight, dim=1))
        norms = model.ent.weight.detach().norm(dim=1)
        optimizer.zero_grad()
        d_pos, d_neg = model(h, r, t), model(nh, r, nt)
        loss = F.relu(MARGIN + d_pos - d_neg).mean()
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(
        w=w, norms=norms, d_pos=d_pos.detach(), d_neg=d_neg.detach(), grads=grads, loss=loss.item()
    )


def truth(run):
    assert torch.allclose(run.norms, torch.ones(ENTITIES), atol=1e-6)
    assert bool((MARGIN + run.d_pos - run.d_neg > 0).all())  # every pair inside the margin
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()), n
        assert bool((g.abs().sum(dim=1) > 0).all()), n  # every entity and relation row
