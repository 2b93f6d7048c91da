"""ColBERT-style late interaction with the document padding removed by multiplying the similarity
matrix by the 0/1 padding mask, ``sim * doc_mask``, before MaxSim takes, for each query token, the
maximum over the document's tokens.  The padded positions' similarities become exactly 0, and the
real tokens' cosine similarities run from -1 to 1 (about half of them negative at this first step):
wherever every real token of a document is negatively similar to a query token, the maximum is a
padding position's 0.  That query token then adds a constant 0 to the document's score and sends it
no gradient; short documents score as their padding.  At this first step 17 of the 256 (query token,
document) maxima are padding.  Every parameter's gradient is finite and nonzero, nothing raises.

Source: https://theneuralbase.com/embeddings/learn/intermediate/colbert-late-interaction-maxsim-scoring/
("How MaxSim scoring works: For each query token embedding, compute its similarity score against
every document token embedding, then take the maximum. Sum (or average) these maximum scores across
all query tokens. That sum is the document's relevance score for this query").  Adapted: the padding
zeroed by a multiplication (the page gives the scoring, not the slip); a vocabulary of 50 tokens
(``padding_idx=0``), a shared encoder ``Embedding(50, 32), Linear(32, 32), Tanh, Linear(32, 16)``
with normalized outputs, 8 queries of 4 tokens, each with a positive document of 2 to 12 tokens
holding two of its tokens, padded to 12, in-batch negatives, cross-entropy over the 8 documents, Adam
at 1e-3.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://theneuralbase.com/embeddings/learn/intermediate/colbert-late-interaction-maxsim-scoring/"
DESCRIPTION = "ColBERT MaxSim over sim * doc_mask: padding's 0 beats negative sims, picked as max"
ASK = []
MUST = [
    [
        r"padd\w*",
        r"\bmask\w*",
        r"-inf",
        r"max\w*[^\n]{0,60}(constant|zero|\b0\b)",
        r"(constant|zero|\b0\b)[^\n]{0,60}max\w*",
    ]
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b", r"requires_grad\s*(=|is|was)?\s*False"]
VOCAB, QLEN, DLEN, B = 50, 4, 12, 8


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 32, padding_idx=0)
        self.mix = nn.Sequential(nn.Linear(32, 32), nn.Tanh())
        self.proj = nn.Linear(32, 16, bias=False)

    def forward(self, tokens):
        return F.normalize(self.proj(self.mix(self.embed(tokens))), dim=-1)


def maxsim(q, d, d_mask, masked_fill):
    sim = torch.einsum("qid,pjd->qpij", q, d)  # (queries, docs, query tokens, doc tokens)
    if masked_fill:
        sim = sim.masked_fill(~d_mask[None, :, None, :], float("-inf"))
    else:
        sim = sim * d_mask[None, :, None, :].float()
    best, where = sim.max(-1)
    return best.sum(-1), where


def batch():
    g = torch.Generator().manual_seed(1)
    queries = torch.randint(1, VOCAB, (B, QLEN), generator=g)
    lengths = torch.randint(2, DLEN + 1, (B,), generator=g)
    docs = torch.zeros(B, DLEN, dtype=torch.long)
    for b in range(B):
        doc = torch.randint(1, VOCAB, (int(lengths[b]),), generator=g)
        doc[:2] = queries[b, :2]  # the positive shares two of its query's tokens
        docs[b, : lengths[b]] = doc[torch.randperm(int(lengths[b]), generator=g)]
    return queries, docs, docs != 0


def step(watch, masked_fill=False):
    torch.manual_seed(0)
    model = Encoder()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    queries, docs, d_mask = batch()
    with watch(model) as w:
        optimizer.zero_grad()
        scores, where = maxsim(model(queries), model(docs), d_mask, masked_fill)
        loss = F.cross_entropy(scores, torch.arange(B))
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    lengths = d_mask.sum(1)
    picked_padding = where >= lengths[None, :, None]  # (queries, docs, query tokens)
    return Run(w=w, picked_padding=picked_padding, grads=grads)


def truth(run):
    assert int(run.picked_padding.sum()) > 0  # some maxima are padding positions
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
