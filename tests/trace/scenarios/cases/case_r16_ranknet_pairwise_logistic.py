"""A healthy step: learning to rank with RankNet's pairwise logistic loss.  A tanh MLP scores the
10 documents of each of 8 queries; for every pair of documents of one query with different
relevance grades (0, 1 or 2), the loss is ``softplus(-(s_i - s_j))`` with ``i`` the more relevant
one, the binary cross-entropy of the score difference against "i above j"; pairs of equal grade are
left out.  A bias on the score cancels in every difference, so the scorer's last layer has none (it
would get an exactly zero gradient).  Every gradient is finite and nonzero.

Source: https://notes.swasilewski.com/Concepts/Pairwise-LTR ("Pairwise Learning to Rank is an
approach to Learning to Rank that optimizes pairs of documents rather than individual documents";
"RankNet / Logistic Loss ... Sigmoid-based loss. Models the probability that [i is ranked above
j]"; "Pairwise Preference: Treats document relationships, not documents in isolation").
Adapted: synthetic features and grades, Adam.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://notes.swasilewski.com/Concepts/Pairwise-LTR"
DESCRIPTION = "healthy: RankNet pairwise logistic loss over differently graded pairs per query"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"no gradient",
    r"all-zero",
    r"dead (units?|relu|neurons?)",
]
QUERIES, DOCS = 8, 10


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(QUERIES, DOCS, 6, generator=g)
    relevance = x @ torch.tensor([1.0, -0.5, 0.5, 0.0, 0.0, 0.2])
    relevance = relevance + 0.3 * torch.randn(QUERIES, DOCS, generator=g)
    grade = torch.bucketize(relevance, torch.tensor([-0.5, 0.5]))  # 0, 1, 2
    return x, grade


def pairs(grade):
    i, j = [], []
    for q in range(QUERIES):
        for a in range(DOCS):
            for b in range(DOCS):
                if grade[q, a] > grade[q, b]:
                    i.append(q * DOCS + a)
                    j.append(q * DOCS + b)
    return torch.tensor(i), torch.tensor(j)


def step(watch):
    torch.manual_seed(0)
    scorer = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 1, bias=False))
    optimizer = torch.optim.Adam(scorer.parameters(), lr=1e-2)
    x, grade = data()
    i, j = pairs(grade)
    with watch(scorer) as w:
        optimizer.zero_grad()
        s = scorer(x.reshape(-1, 6)).squeeze(1)
        diff = s[i] - s[j]
        loss = F.binary_cross_entropy_with_logits(diff, torch.ones_like(diff))
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in scorer.named_parameters()}
        optimizer.step()
    return Run(w=w, loss=loss.item(), diff=diff.detach(), grads=grads, grade=grade, i=i, j=j)


def truth(run):
    flat = run.grade.flatten()
    assert len(run.i) > 100
    assert bool((flat[run.i] > flat[run.j]).all())  # no pair of equal grade
    assert abs(float(F.softplus(-run.diff).mean()) - run.loss) < 1e-6
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
