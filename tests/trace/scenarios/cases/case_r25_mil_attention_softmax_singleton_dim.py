"""Attention-based multiple-instance pooling (Ilse et al.) written without the transpose: the
attention network scores each instance of a bag, ``a = w(tanh(V h))`` of shape ``(K, 1)``, and the
weights are taken with ``F.softmax(a, dim=-1)``, a softmax over the size-1 dimension.  A softmax
over one element is the constant 1 whatever its input, so every instance gets weight 1 (the
pooling is a plain sum over the bag, not a weighted mean) and the derivative of the weights with
respect to the scores is exactly zero: the attention network ``attention.0`` / ``attention.2``
gets an exactly-zero gradient, while the instance encoder and the bag classifier get finite,
nonzero ones.  Nothing raises.

Source: https://ar5iv.labs.arxiv.org/html/2005.12991 ("a label corresponds to a bag of instances
(e.g. image patches), and to classify such bag, aggregation of information from all of the
instances is needed"; "Recently, Ilse et al. [13] introduced" attention-based MIL pooling).
Adapted: bags of 10 instances with 16 features, an instance encoder ``Linear(16, 32), Tanh``,
attention ``Linear(32, 24), Tanh, Linear(24, 1)``, a ``Linear(32, 1)`` bag classifier with
``binary_cross_entropy_with_logits``; a bag is positive when one of its instances has a first
feature above 1.5; 8 bags per step, one bag at a time as in Ilse et al., Adam at 1e-3.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://ar5iv.labs.arxiv.org/html/2005.12991"
DESCRIPTION = "MIL attention softmax over the size-1 dim: all weights 1, attention gets zero grad"
ASK = ["attention.0.weight"]
MUST = [
    [
        r"softmax[^\n]*(dim|dimension|axis)",
        r"(dim|dimension|axis)[^\n]*softmax",
        r"singleton",
        r"size[- ]?(of )?1\b",
        r"(single|one) element",
        r"transpose",
        r"(equal|all|every)\w*[^\n]{0,20}\b1\b",
    ],
    [r"\bzero\b", r"no gradient", r"constant"],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"\bdead\b",
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
]


class AttentionMIL(nn.Module):
    def __init__(self, transpose=False):
        super().__init__()
        self.transpose = transpose
        self.encoder = nn.Sequential(nn.Linear(16, 32), nn.Tanh())
        self.attention = nn.Sequential(nn.Linear(32, 24), nn.Tanh(), nn.Linear(24, 1))
        self.classifier = nn.Linear(32, 1)

    def forward(self, bag):
        h = self.encoder(bag)  # (K, 32)
        a = self.attention(h)  # (K, 1)
        if self.transpose:
            a = F.softmax(a.t(), dim=1)  # (1, K): a weight per instance, summing to 1
            z = a @ h
        else:
            a = F.softmax(a, dim=-1)  # over the size-1 dimension: every weight is 1
            z = (a * h).sum(0, keepdim=True)
        return self.classifier(z).squeeze(), a


def data():
    g = torch.Generator().manual_seed(1)
    bags = torch.randn(8, 10, 16, generator=g)
    labels = (bags[:, :, 0] > 1.5).any(1).float()
    return bags, labels


def step(watch, transpose=False):
    torch.manual_seed(0)
    model = AttentionMIL(transpose)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    bags, labels = data()
    weights = []
    with watch(model) as w:
        optimizer.zero_grad()
        loss = 0.0
        for bag, label in zip(bags, labels, strict=True):
            logit, a = model(bag)
            weights.append(a.detach())
            loss = loss + F.binary_cross_entropy_with_logits(logit, label) / len(bags)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, grads=grads, weights=weights, labels=labels)


def truth(run):
    assert 0 < float(run.labels.sum()) < len(run.labels)  # both kinds of bags
    for a in run.weights:
        assert a.shape == (10, 1) and bool((a == 1).all())
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()), n
        if n.startswith("attention."):
            assert bool((g == 0).all()), n
        else:
            assert bool(g.abs().sum() > 0), n
