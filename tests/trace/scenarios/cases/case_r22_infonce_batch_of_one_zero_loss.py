"""An in-batch-negatives InfoNCE loss trained one (query, positive) pair at a time.  The loss is a
cross-entropy over the ``B x B`` similarity matrix whose off-diagonal entries are the negatives;
with ``B = 1`` the matrix is ``1 x 1``, the softmax over one logit is exactly 1, and the loss is
exactly 0 whatever the embeddings: ``log_softmax`` of a single logit is ``z - z``, its gradient
``1 - softmax(z) = 0``.  Every parameter of the encoder gets an exactly zero gradient and nothing
moves.  Nothing raises; nothing is NaN.

Source: https://nlpcitations-com.pages.dev/citations/contrastive-loss/ (``def
infonce_loss(query_embs, pos_embs, temperature=0.05): # In-batch negatives: all other positives
serve as negatives``, ``sim = torch.matmul(q, p.T) / temperature``; "In-batch negatives: free from
batch construction").  Adapted: the page's ``infonce_loss`` with one shared encoder
(``Linear(12, 16)``, ``Tanh``, ``Linear(16, 8)``) for queries and positives (a point and the same
point plus noise of 0.1), SGD at 0.1, a batch of one pair.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://nlpcitations-com.pages.dev/citations/contrastive-loss/"
DESCRIPTION = "InfoNCE with in-batch negatives on a batch of one pair: loss exactly 0, all grads 0"
ASK = ["0.weight"]
MUST = [
    [
        r"all[- ]zero",
        r"\bzero grad\w*",
        r"gradients? (is |are |was |were )?(exactly )?(all )?(0|zero)",
        r"no gradient",
        r"(did not|didn't|never) (move|change)",
    ],
    [
        r"batch (size )?(of )?(1|one)\b",
        r"batch[_ ]size\s*=?\s*1\b",
        r"single (pair|example|sample|positive|logit|column)",
        r"no negatives?",
        r"one (logit|class|column|candidate)",
        r"1\s*[x×]\s*1",
        r"(loss|cross[- ]entropy) (is |was )?(exactly |identically )?(0|zero)\b",
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
]


def infonce_loss(query_embs, pos_embs, temperature=0.05):
    """The page's loss: in-batch negatives, cross-entropy over the similarity matrix."""
    q = F.normalize(query_embs, dim=-1)
    p = F.normalize(pos_embs, dim=-1)
    sim = torch.matmul(q, p.T) / temperature
    labels = torch.arange(len(q))
    return F.cross_entropy(sim, labels), sim


def data(n):
    g = torch.Generator().manual_seed(1)
    x = torch.randn(n, 12, generator=g)
    return x, x + 0.1 * torch.randn(n, 12, generator=g)


def step(watch, batch=1):
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
    assert tuple(run.sim.shape) == (1, 1)  # one pair: no negatives
    assert run.loss == 0.0
    params = dict(run.model.named_parameters())
    for n, g in run.grads.items():
        assert bool((g == 0).all()), n  # present and exactly zero
        assert torch.equal(params[n].detach(), run.before[n]), n
