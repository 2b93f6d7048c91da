"""Poincare embeddings of a small hierarchy trained with a plain Euclidean ``torch.optim.SGD`` at
the paper's learning rate, without the Riemannian rescaling of the gradient by ``(1 - ||theta||^2)^2
/ 4`` nor the projection back into the unit ball.  The distance ``arcosh(1 + 2 ||u - v||^2 / ((1 -
||u||^2)(1 - ||v||^2)))`` is defined inside the ball only.  The first step is finite, but its
Euclidean gradients near the origin (each term about 2 in size, summed over a node's pairs) carry 13
of the 15 nodes outside the ball (norms up to 4); on the second step ``1 - ||u||^2`` is negative,
the argument of ``arcosh`` drops below 1 for pairs with one node inside and one outside, the
distance, the loss and every gradient are NaN. Nothing raises.

Source: https://study.space/p/Poincar%C3%A9_Embeddings_for_Learning_Hierarchical_Representations
("embedding them into hyperbolic space, specifically an n-dimensional Poincare ball"; "The authors
propose an efficient algorithm based on Riemannian optimization to compute these embeddings").
Adapted: a binary tree of 15 nodes (the transitive closure, 34 ancestor-descendant pairs), 2
dimensions in float64 as in the reference code, initialisation uniform in [-1e-3, 1e-3], the paper's
softmax loss over each pair's non-related nodes as negatives, summed over the pairs as the paper
writes it, SGD at learning rate 1.
"""

import math

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://study.space/p/Poincar%C3%A9_Embeddings_for_Learning_Hierarchical_Representations"
DESCRIPTION = "Poincare embeddings with Euclidean SGD, no rescale nor projection: leave ball, NaN"
ASK = []
MUST = [
    [r"\bnan\b|non-?finite"],
    [
        r"(unit |poincar\w* )?ball",
        r"outside|leav\w*|left the|escap\w*|norm\w* (>|above|over|exceed\w*) ?1",
        r"project\w*|renorm\w*|retract\w*",
        r"riemann\w*|rsgd",
        r"arcosh|acosh|arccosh",
        r"1 - \|\|?\w+\|\|?\^?2|1 - norm",
    ],
]
MUST_NOT = [FALSE_OK, r"\bdead\b", r"requires_grad\s*(=|is|was)?\s*False"]
NODES, LR = 15, 1.0


def closure():
    """(ancestor, descendant) pairs of a binary tree with nodes 0..14 (parent of i is (i-1)//2)."""
    pairs = []
    for v in range(1, NODES):
        u = (v - 1) // 2
        while True:
            pairs.append((u, v))
            if u == 0:
                break
            u = (u - 1) // 2
    related = torch.zeros(NODES, NODES, dtype=torch.bool)
    for u, v in pairs:
        related[u, v] = related[v, u] = True
    related |= torch.eye(NODES, dtype=torch.bool)
    return torch.tensor(pairs), related


class Poincare(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(NODES, 2, dtype=torch.float64)
        nn.init.uniform_(self.emb.weight, -1e-3, 1e-3)

    def forward(self, pairs, related):
        u, v = self.emb.weight[pairs[:, 0], None], self.emb.weight[None]  # (P, 1, 2), (1, N, 2)
        # the positive v and every node unrelated to u compete; other related nodes (u itself
        # among them, at distance arcosh(1)) are left out before arcosh, not after
        keep = ~related[pairs[:, 0]]
        keep[torch.arange(len(pairs)), pairs[:, 1]] = True
        sq = ((u - v) ** 2).sum(-1)
        den = (1 - (u**2).sum(-1)) * (1 - (v**2).sum(-1))
        arg = torch.where(keep, 1 + 2 * sq / den, torch.full_like(sq, 2.0))
        scores = (-torch.acosh(arg)).masked_fill(~keep, -math.inf)
        return F.cross_entropy(scores, pairs[:, 1], reduction="sum"), arg


def riemannian_sgd_(emb):
    """RSGD's rescaling of the Euclidean gradient by (1 - ||x||^2)^2 / 4, before the step."""
    with torch.no_grad():
        sq = (emb.weight**2).sum(1, keepdim=True)
        emb.weight.grad.mul_((1 - sq) ** 2 / 4)


def project_(emb, eps=1e-5):
    with torch.no_grad():
        norm = emb.weight.norm(dim=1, keepdim=True)
        emb.weight.mul_(torch.where(norm >= 1, (1 - eps) / norm, torch.ones_like(norm)))


def step(watch, riemannian=False):
    torch.manual_seed(0)
    model = Poincare()
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    pairs, related = closure()
    losses, grads, norms = [], [], []
    with watch(model) as w:
        for _ in range(2):
            optimizer.zero_grad()
            loss, _ = model(pairs, related)
            loss.backward()
            grads.append(model.emb.weight.grad.detach().clone())
            if riemannian:
                riemannian_sgd_(model.emb)
            optimizer.step()
            if riemannian:
                project_(model.emb)
            losses.append(float(loss.detach()))
            norms.append(model.emb.weight.detach().norm(dim=1))
    return Run(w=w, model=model, losses=losses, grads=grads, norms=norms)


def truth(run):
    assert math.isfinite(run.losses[0]) and bool(torch.isfinite(run.grads[0]).all())
    assert bool((run.norms[0] > 1).sum() >= NODES // 2)  # the first step left the ball
    assert math.isnan(run.losses[1])
    assert bool(torch.isnan(run.grads[1]).any())
