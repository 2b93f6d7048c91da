"""A healthy step: a tabular classifier with entity embeddings, one ``nn.Embedding`` per
categorical column (sex 2 levels, education 7, marriage 4; width ``(levels + 1) // 2``), their
vectors concatenated with five continuous columns normalised by ``BatchNorm1d``, then a tanh MLP
and ``BCEWithLogitsLoss`` on an imbalanced default label (a quarter positive).  Every level of
every column occurs in the batch, so every embedding row gets a gradient.  Every gradient is finite
and nonzero.

Source: https://hacksforai.blogspot.com/search/label/embeddings%20for%20categorical%20features
("How to adopt Embeddings for Categorical features in Tabular Data using PyTorch's nn.Embedding( )
-- Part 2 ... we will figure out how to create these embeddings and combine them with other
continuous features to build a neural network model"; the credit-card default data, "MARRIAGE has
levels 0,1,2,3").  Adapted: synthetic columns with the dataset's level counts, one Adam step.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://hacksforai.blogspot.com/search/label/embeddings%20for%20categorical%20features"
DESCRIPTION = "healthy: entity embeddings for 3 categorical columns + BatchNorm'd continuous ones"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"no gradient",
    r"all-zero",
    r"dead (units?|relu|neurons?)",
    r"index out of range",
]
LEVELS = {"sex": 2, "education": 7, "marriage": 4}


class TabularNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.embeddings = nn.ModuleDict(
            {k: nn.Embedding(n, (n + 1) // 2) for k, n in LEVELS.items()}
        )
        width = sum((n + 1) // 2 for n in LEVELS.values()) + 5
        self.bn = nn.BatchNorm1d(5)
        self.mlp = nn.Sequential(nn.Linear(width, 32), nn.Tanh(), nn.Linear(32, 1))

    def forward(self, cats, conts):
        parts = [self.embeddings[k](cats[:, i]) for i, k in enumerate(LEVELS)]
        return self.mlp(torch.cat([*parts, self.bn(conts)], dim=1)).squeeze(1)


def data():
    g = torch.Generator().manual_seed(1)
    cats = torch.stack([torch.randint(0, n, (256,), generator=g) for n in LEVELS.values()], 1)
    conts = torch.randn(256, 5, generator=g) * torch.tensor([5e4, 10.0, 3e3, 3e3, 1.0]) + 100.0
    logit = 0.8 * (cats[:, 2] == 2).float() - 0.3 * cats[:, 1].float() / 6 - 1.2
    y = (torch.rand(256, generator=g) < torch.sigmoid(logit)).float()
    return cats, conts, y


def step(watch):
    torch.manual_seed(0)
    model = TabularNet()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    cats, conts, y = data()
    with watch(model) as w:
        optimizer.zero_grad()
        loss = F.binary_cross_entropy_with_logits(model(cats, conts), y)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, grads=grads, cats=cats, y=y)


def truth(run):
    for i, n in enumerate(LEVELS.values()):
        assert set(run.cats[:, i].tolist()) == set(range(n))  # every level in the batch
    assert 0.1 < float(run.y.mean()) < 0.4
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        if n.startswith("embeddings."):
            assert bool((g.abs().sum(1) > 0).all()), n  # every row
