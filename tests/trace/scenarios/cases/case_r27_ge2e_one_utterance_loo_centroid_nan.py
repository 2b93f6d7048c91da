"""A GE2E speaker-verification step on a batch of 8 speakers with one utterance each (M = 1).  The
loss compares each embedding with every speaker's centroid and, for its own speaker, with the
leave-one-out centroid ``c_(j,-i) = (sum_k e_(j,k) - e_(j,i)) / (M - 1)``.  With M = 1 that centroid
is ``(e - e) / 0 = 0 / 0 = NaN``, the own-speaker cosine similarity and the scaled similarity ``w cos
+ b`` are NaN, so is the softmax loss, and every gradient (the encoder's, ``w``'s and ``b``'s) is
NaN.  Nothing raises.

Source: https://knowledge.kevinjosethomas.com/Artificial-Intelligence/Generalized-End-to-End-Loss-(GE2E)
("Calculate centroids for each speaker"; "Compute leave-one-out centroids for stability c_(i,-j) =
1/(M-1) sum_(k != j) e_(i,k)"; "Measure the cosine similarity between each embedding and all
centroids").  Adapted: 40-dimensional utterance features around 8 random speaker means, an encoder
``Linear(40, 64), Tanh, Linear(64, 32)``, the similarity scale ``w = 10`` and bias ``b = -5`` of the
GE2E paper as parameters of the model, SGD at 0.01.
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://knowledge.kevinjosethomas.com/Artificial-Intelligence/"
    "Generalized-End-to-End-Loss-(GE2E)"
)
DESCRIPTION = "GE2E with M = 1 utterance per speaker: leave-one-out centroid 0 / (M - 1) = NaN"
ASK = []
MUST = [
    [r"\bnan\b"],
    [
        r"\bM\s?-\s?1\b",
        r"(one|single|1) utterance",
        r"leave[- ]one[- ]out",
        r"centroid\w*",
        r"\b0\s?/\s?0\b",
        r"divi\w* by (zero|0)\b",
        r"/ ?(zero|0)\b",
        r"empty",
        r"mean of nothing|over nothing|no (other )?(utterance|element)s?",
    ],
]
MUST_NOT = [FALSE_OK, r"\bdead\b", r"requires_grad\s*(=|is|was)?\s*False"]
SPEAKERS = 8


class GE2E(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(40, 64), nn.Tanh(), nn.Linear(64, 32))
        self.w = nn.Parameter(torch.tensor(10.0))
        self.b = nn.Parameter(torch.tensor(-5.0))

    def loss(self, feats):  # feats: (speakers, M, 40)
        n, m = feats.shape[:2]
        e = self.encoder(feats)
        centroids = e.mean(1)  # (n, D)
        loo = (e.sum(1, keepdim=True) - e) / (m - 1)  # (n, m, D)
        cos = F.cosine_similarity(e[:, :, None, :], centroids[None, None, :, :], dim=-1)
        own = F.cosine_similarity(e, loo, dim=-1)  # (n, m)
        same = torch.eye(n, dtype=torch.bool)[:, None, :].expand(n, m, n)
        cos = torch.where(same, own[:, :, None].expand(n, m, n), cos)
        sim = self.w * cos + self.b
        labels = torch.arange(n)[:, None].expand(n, m)
        return F.cross_entropy(sim.reshape(n * m, n), labels.reshape(-1)), loo


def utterances(m):
    g = torch.Generator().manual_seed(1)
    means = torch.randn(SPEAKERS, 1, 40, generator=g)
    return means + 0.5 * torch.randn(SPEAKERS, m, 40, generator=g)


def step(watch, m=1):
    torch.manual_seed(0)
    model = GE2E()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    feats = utterances(m)
    with watch(model) as w:
        optimizer.zero_grad()
        loss, loo = model.loss(feats)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, m=m, loss=float(loss.detach()), loo=loo.detach(), grads=grads)


def truth(run):
    assert run.m == 1
    assert bool(torch.isnan(run.loo).all())
    assert torch.isnan(torch.tensor(run.loss))
    for n, g in run.grads.items():
        assert bool(torch.isnan(g).all()), n
