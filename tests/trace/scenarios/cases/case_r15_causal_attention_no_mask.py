"""A tiny decoder-only language model (token and position embeddings, one self-attention head, an
output layer) trained on next-token prediction with no causal mask: every position attends to
every key, the later ones included, so the prediction at position t reads the token it is asked to
predict (the input at t + 1).  Nothing is non-finite and every parameter gets a nonzero gradient;
the training loss falls far below what the data allows (the tokens are drawn uniformly at random,
so an honest model cannot beat log 8 = 2.08 nats on unseen sequences): after 150 Adam steps it is
under half of that on the batch and on 256 unseen sequences, where the same model with a causal
mask is above log 8.  The leak is in the graph: the logits
at position 2 have a nonzero derivative with respect to the embeddings of positions 3 to 7.

Source: https://tracker-7ex.pages.dev/00_ai_foundation/04_autoregressive_generation/01-opening-failure/
("what breaks without a causal mask"; "The loss falls. We feel safe. But we forgot the exam
rule"; "every token can see future keys.  So token t can read answers meant for t+1 and beyond";
its ``bad_attention`` is numpy: ``weights = softmax(q @ k.T / sqrt(d_k))`` with no mask).
Adapted: the page's attention in torch inside a one-layer model, 150 unwatched Adam steps, then
one watched step.
"""

import math

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://tracker-7ex.pages.dev/00_ai_foundation/04_autoregressive_generation/01-opening-failure/"
DESCRIPTION = "decoder self-attention without a causal mask: position t reads token t+1 (leak)"
ASK = []
MUST = [
    [
        r"causal",
        r"future (tokens?|positions?|keys?)",
        r"look[- ]?ahead",
        r"leak\w*",
        r"\bmask\w*",
        r"(attends?|see|sees|read\w*) [^\n]{0,40}(later|next|future)",
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"dead (units?|relu|neurons?)",
    r"no_grad",
    r"not in (the |any )?optimizer",
]
VOCAB, LENGTH, DIM = 8, 8, 16


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, DIM)
        self.pos = nn.Embedding(LENGTH, DIM)
        self.q = nn.Linear(DIM, DIM)
        self.k = nn.Linear(DIM, DIM)
        self.v = nn.Linear(DIM, DIM)
        self.out = nn.Linear(DIM, VOCAB)
        self.mask = "none"  # "none", "lower" (causal) or "upper" (the triangle flipped)

    def embed(self, x):
        return self.tok(x) + self.pos(torch.arange(x.shape[1]))

    def from_embeddings(self, h):
        scores = self.q(h) @ self.k(h).transpose(1, 2) / math.sqrt(DIM)
        n = h.shape[1]
        if self.mask != "none":
            ones = torch.ones(n, n, dtype=torch.bool)
            keep = torch.tril(ones) if self.mask == "lower" else torch.triu(ones)
            scores = scores.masked_fill(~keep, float("-inf"))
        att = torch.softmax(scores, dim=-1)
        return self.out(h + att @ self.v(h))

    def forward(self, x):
        return self.from_embeddings(self.embed(x))


def sequences(n, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, VOCAB, (n, LENGTH + 1), generator=g)


def lm_loss(model, seq):
    logits = model(seq[:, :-1])
    return F.cross_entropy(logits.reshape(-1, VOCAB), seq[:, 1:].reshape(-1))


def step(watch, mask="none"):
    torch.manual_seed(0)
    model = TinyLM()
    model.mask = mask
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    data = sequences(256, seed=1)
    for _ in range(150):  # training before the watched step, not watched
        opt.zero_grad()
        lm_loss(model, data).backward()
        opt.step()
    with watch(model) as w:
        opt.zero_grad()
        loss = lm_loss(model, data)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        opt.step()
    # which input positions the logits at each position depend on (trained model, one sequence)
    h = model.embed(data[:1, :-1]).detach().requires_grad_()
    logits = model.from_embeddings(h)
    reach = []
    for t in range(LENGTH):
        (g,) = torch.autograd.grad(logits[0, t].sum(), h, retain_graph=True)
        reach.append([float(g[0, s].abs().sum()) for s in range(LENGTH)])
    with torch.no_grad():  # unseen random sequences: only a leak can beat log 8
        fresh = float(lm_loss(model, sequences(256, seed=2)))
    return Run(w=w, loss=float(loss.detach()), fresh=fresh, grads=grads, reach=reach)


def truth(run):
    assert run.loss < 0.5 * math.log(VOCAB)  # far below what random tokens allow
    assert run.fresh < 0.5 * math.log(VOCAB)  # on unseen sequences too: it copies
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    reach = run.reach
    assert all(reach[2][s] > 0 for s in range(3, LENGTH))  # position 2 reads positions 3..7
    assert reach[0][1] > 0  # the first prediction reads the very token it predicts
