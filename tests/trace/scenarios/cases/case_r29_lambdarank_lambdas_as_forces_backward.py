"""LambdaRank written the way its description reads, by computing the lambdas instead of a loss and
handing them to autograd, ``scores.backward(lambdas)``, with each lambda taken as the force on a
document's score: for every pair in which document ``i`` is more relevant than ``j``, ``i`` is
pushed up and ``j`` down by ``|Delta NDCG_ij| * sigmoid(-(s_i - s_j))``.  ``backward`` takes its
argument as the gradient of the loss with respect to the scores, and the optimizer steps against it:
every score moves opposite to its force.  After one SGD step the NDCG-weighted pairwise loss has
risen; every gradient is finite and nonzero, nothing raises, nothing is NaN: the gradient has the
wrong sign.

Source: https://notesonai.com/lambdarank ("To train a model, we do not need the costs themselves,
only the gradients (of the costs wrt model scores)"; "The gradient should be bigger for pairs of
documents that produces a bigger impact in NDCG by swapping positions"; "Multiply actual gradients
with the change in NDCG by swapping the rank positions of the two documents").  Adapted: the lambdas
written as forces (the sign of Burges's ``lambda_ij`` dropped), 4 queries of 10 documents with 8
features and graded relevance 0 to 3 from a linear teacher, a scorer ``Linear(8, 32), Tanh,
Linear(32, 1)``, ``|Delta NDCG|`` from the ranks of the current scores, SGD at 0.05.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://notesonai.com/lambdarank"
DESCRIPTION = "LambdaRank: scores.backward(lambdas) with lambdas as forces: wrong-sign gradient"
ASK = []
MUST = [
    [
        r"\bsign\b",
        r"wrong[- ]sign",
        r"negat(ed|ive|ion) of (the )?(gradient|lambdas?)",
        r"minus (sign|the gradient)",
        r"opposite (direction|sign)",
        r"wrong direction",
        r"gradient ascent|ascend\w*",
        r"backward\s?\(\s?(lambdas|gradient|grad_tensors)",
        r"gradient argument",
        r"(loss|objective)[^\n]{0,40}(increas|rose|went up|grew)",
    ]
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b", r"requires_grad\s*(=|is|was)?\s*False"]
QUERIES, DOCS, FEATURES = 4, 10, 8


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(QUERIES, DOCS, FEATURES, generator=g)
    u = x @ torch.randn(FEATURES, generator=g)
    rel = torch.bucketize(u, torch.tensor([-1.0, 0.0, 1.0]))  # graded 0..3
    return x, rel


def delta_ndcg(scores, rel):
    """|Delta NDCG_ij| of swapping documents i and j in the ranking by ``scores``, per query."""
    ranks = scores.argsort(1, descending=True).argsort(1)
    gain = 2.0 ** rel.float() - 1
    disc = 1 / torch.log2(ranks.float() + 2)
    ideal = (gain.sort(1, descending=True)[0] / torch.log2(torch.arange(DOCS).float() + 2)).sum(1)
    d_gain = gain[:, :, None] - gain[:, None, :]
    d_disc = disc[:, :, None] - disc[:, None, :]
    return (d_gain * d_disc).abs() / ideal[:, None, None]


def weighted_pairwise(scores, rel, delta):
    """The loss whose gradient LambdaRank's lambdas are: sum |Delta NDCG| softplus(-(si - sj))."""
    pairs = (rel[:, :, None] > rel[:, None, :]).float()
    diff = scores[:, :, None] - scores[:, None, :]
    return (pairs * delta * F.softplus(-diff)).sum() / QUERIES


def forces(scores, rel, delta):
    pairs = (rel[:, :, None] > rel[:, None, :]).float()
    rho = torch.sigmoid(-(scores[:, :, None] - scores[:, None, :]))
    push = pairs * delta * rho  # i above j: i pushed up, j pushed down
    return (push.sum(2) - push.sum(1)) / QUERIES


def step(watch, as_loss=False):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(FEATURES, 32), nn.Tanh(), nn.Linear(32, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    x, rel = data()
    with watch(model) as w:
        optimizer.zero_grad()
        scores = model(x).squeeze(-1)
        delta = delta_ndcg(scores.detach(), rel)
        before = float(weighted_pairwise(scores.detach(), rel, delta))
        if as_loss:
            weighted_pairwise(scores, rel, delta).backward()
        else:
            scores.backward(forces(scores.detach(), rel, delta))
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    with torch.no_grad():
        after = float(weighted_pairwise(model(x).squeeze(-1), rel, delta))
    return Run(w=w, before=before, after=after, grads=grads)


def truth(run):
    assert run.after > run.before  # the step made the ranking objective worse
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
