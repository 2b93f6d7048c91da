"""A one-block nGPT (normalised Transformer) language model whose unit-norm helper is
``F.normalize(x)`` with the default ``dim=1``.  On the weight matrices, ``(out, in)``, ``dim=1`` is
the last dimension and the rows come out unit norm, as nGPT wants, before training and again after
each optimizer step; on the hidden states, ``(batch, time, width)``, ``dim=1`` is the time axis: each
feature is normalised over the sequence's positions instead of each token's vector over its
features.  The tokens do not lie on the hypersphere (their norms range far from 1), and every
position's normalised state depends on the positions after it: although the attention is causal,
the logits at the first position change when only the last token changes, a leak of the targets
into the inputs.  Every gradient is finite and nonzero; nothing raises.

Source: https://www.envisioning.com/vocab/ngpt-normalized-transformer ("nGPT, or the Normalized
Transformer, is a transformer architecture variant in which all hidden state representations are
constrained to lie on the surface of a unit hypersphere"; "The core mechanism works by normalizing
weight matrices and hidden states so that every representation maintains unit norm"; "The
architecture also introduces learnable scaling factors").  Adapted: nGPT's block updates ``h <-
norm(h + alpha (norm(block(h)) - h))`` with learnable ``alpha`` (initial 0.05), queries and keys
normalised and scaled by a learnable ``s_qk``, the softmax scaled by ``sqrt(d)``, logits ``s_z * h
E^T`` with unit-norm output embeddings; no positional encoding; a vocabulary of 16, width 32, one
block with one head and a SiLU MLP of 64, sequences of 12, Adam at 1e-3, every matrix renormalised
after the step.
"""

import math

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://www.envisioning.com/vocab/ngpt-normalized-transformer"
DESCRIPTION = "nGPT with F.normalize(h) default dim=1 on (B, T, D): normalised over time, leaks"
ASK = []
MUST = [
    [r"normali[sz]\w*", r"unit[- ]norm", r"hypersphere"],
    [
        r"dim\s?=\s?1",
        r"default dim\w*",
        r"wrong (dim\w*|axis)",
        r"(time|sequence|position\w*|token) (axis|dim\w*)",
        r"over (the )?(time|sequence|positions|tokens)",
        r"across (the )?(time|sequence|positions|tokens)",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b"]
VOCAB, WIDTH, HIDDEN, LENGTH = 16, 32, 64, 12


class Unit:
    def __init__(self, fixed):
        self.fixed = fixed

    def __call__(self, x):
        return F.normalize(x, dim=-1) if self.fixed else F.normalize(x)


class NGPT(nn.Module):
    def __init__(self, fixed):
        super().__init__()
        self.unit = Unit(fixed)
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.q, self.k, self.v, self.o = (nn.Linear(WIDTH, WIDTH, bias=False) for _ in range(4))
        self.fc1 = nn.Linear(WIDTH, HIDDEN, bias=False)
        self.fc2 = nn.Linear(HIDDEN, WIDTH, bias=False)
        self.out = nn.Linear(WIDTH, VOCAB, bias=False)
        self.s_qk = nn.Parameter(torch.ones(WIDTH))
        self.alpha_a = nn.Parameter(torch.full((WIDTH,), 0.05))
        self.alpha_m = nn.Parameter(torch.full((WIDTH,), 0.05))
        self.s_z = nn.Parameter(torch.tensor(10.0))
        self.renormalise()

    @torch.no_grad()
    def renormalise(self):  # nGPT keeps every matrix's rows on the unit sphere
        for m in (self.embed, self.q, self.k, self.v, self.o, self.fc1, self.fc2, self.out):
            m.weight.copy_(self.unit(m.weight))

    def forward(self, tokens):
        u, t = self.unit, tokens.shape[1]
        h = u(self.embed(tokens))
        q, k = u(self.q(h)) * self.s_qk, u(self.k(h)) * self.s_qk
        scores = q @ k.transpose(-1, -2) / math.sqrt(WIDTH)
        scores = scores + torch.full((t, t), float("-inf")).triu(1)
        h_a = u(self.o(scores.softmax(-1) @ self.v(h)))
        h = u(h + self.alpha_a * (h_a - h))
        h_m = u(self.fc2(F.silu(self.fc1(h))))
        h = u(h + self.alpha_m * (h_m - h))
        return self.s_z * self.out(h), h


def data():
    g = torch.Generator().manual_seed(1)
    return torch.randint(0, VOCAB, (16, LENGTH + 1), generator=g)


def step(watch, fixed=False):
    torch.manual_seed(0)
    model = NGPT(fixed)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    seq = data()
    inputs, targets = seq[:, :-1], seq[:, 1:]
    with watch(model) as w:
        optimizer.zero_grad()
        logits, h = model(inputs)
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
        model.renormalise()
    with torch.no_grad():  # probe: change only the last input token
        changed = inputs.clone()
        changed[:, -1] = (changed[:, -1] + 1) % VOCAB
        moved = (model(changed)[0] - model(inputs)[0])[:, :-1].abs().max()
        row_norms = model.q.weight.norm(dim=-1)
    return Run(
        w=w, grads=grads, loss=float(loss.detach()), moved=float(moved),
        token_norm_error=float((h.detach().norm(dim=-1) - 1).abs().max()),
        row_norm_error=float((row_norms - 1).abs().max()),
    )  # fmt: skip


def truth(run):
    assert math.isfinite(run.loss)
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert run.row_norm_error < 1e-5  # the matrices' rows are unit norm (dim=1 is their last)
    assert run.token_norm_error > 0.3  # the tokens are not
    assert run.moved > 1e-3  # earlier positions read the last token
