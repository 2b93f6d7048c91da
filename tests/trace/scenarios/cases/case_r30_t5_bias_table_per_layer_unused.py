"""A small T5-style encoder whose every layer was built with its own relative position bias table
(``has_relative_attention_bias=True`` for all three layers), while the forward follows T5's: the
first layer computes ``position_bias`` from its table and the later layers reuse the bias passed
along.  The tables of layers 1 and 2 are never read: their ``.grad`` stays ``None`` and, though the
optimizer holds them, they never move.  Every other parameter gets a finite, nonzero gradient.
Nothing raises.

Source: https://1cademy.com/node/number-of-buckets-for-t-bias-terms/FXuNWLW9wSzjQjpD30ku ("In the T5
relative position bias implementation, the learnable bias parameters are associated with a set of
n_b + 1 distinct buckets. This structure groups various query-key offsets together, with all
relative position encodings PE(i, j) that fall into the same bucket sharing the exact same bias
term").  Adapted: a table in every layer while the bias of the first is passed on (the page gives
the buckets, not the layers); a vocabulary of 32, sequences of 12, width 16, 2 heads, 8
bidirectional buckets up to distance 16 (T5's bucketing), no scaling of the scores (as T5), an FFN
``Linear(16, 32), ELU, Linear(32, 16)`` per layer, RMS layer norms, each token's target the token
two positions to its left, Adam at 1e-3.
"""

import math

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://1cademy.com/node/number-of-buckets-for-t-bias-terms/FXuNWLW9wSzjQjpD30ku"
DESCRIPTION = (
    "T5 encoder with a bias table in every layer, layer 0's bias reused: tables 1, 2 no grad"
)
ASK = ["layers.1.rel_bias.weight"]
MUST = [
    [r"^summary:[^\n]*(rel_bias|layers\.[12])"],
    [
        r"(not|never) (used|read|called|reached)",
        r"unused",
        r"position_bias|bias (of|from) (the )?(first|layer 0)|reus\w*|passed (along|on)",
        r"(did not|didn't|never) (take part|participate|contribute)",
        r"not (part of|in) the (graph|forward|loss)",
        r"outside (the |this )?(step|block|graph)",
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"\bdead\b",
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
]
VOCAB, LENGTH, WIDTH, HEADS, BUCKETS, MAX_DISTANCE = 32, 12, 16, 2, 8, 16


def bucket(relative):
    """T5's bidirectional bucketing of key - query offsets."""
    half = BUCKETS // 2
    out = (relative > 0).long() * half
    n = relative.abs()
    exact = half // 2
    large = (
        exact
        + (
            torch.log(n.float().clamp(min=1) / exact)
            / math.log(MAX_DISTANCE / exact)
            * (half - exact)
        ).long()
    )
    return out + torch.where(n < exact, n, large.clamp(max=half - 1))


class RMSNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(WIDTH))

    def forward(self, x):
        return self.weight * x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)


class Layer(nn.Module):
    def __init__(self, has_relative_attention_bias):
        super().__init__()
        self.norm1, self.norm2 = RMSNorm(), RMSNorm()
        self.qkv = nn.Linear(WIDTH, 3 * WIDTH, bias=False)
        self.o = nn.Linear(WIDTH, WIDTH, bias=False)
        self.ffn = nn.Sequential(nn.Linear(WIDTH, 32), nn.ELU(), nn.Linear(32, WIDTH))
        if has_relative_attention_bias:
            self.rel_bias = nn.Embedding(BUCKETS, HEADS)

    def compute_bias(self):
        pos = torch.arange(LENGTH)
        return self.rel_bias(bucket(pos[None] - pos[:, None])).permute(2, 0, 1)  # (H, L, L)

    def forward(self, x, position_bias):
        if position_bias is None:
            position_bias = self.compute_bias()
        b = x.shape[0]
        q, k, v = self.qkv(self.norm1(x)).view(b, LENGTH, 3, HEADS, -1).unbind(2)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) + position_bias
        attn = torch.einsum("bhqk,bkhd->bqhd", scores.softmax(-1), v).reshape(b, LENGTH, WIDTH)
        x = x + self.o(attn)
        return x + self.ffn(self.norm2(x)), position_bias


class Encoder(nn.Module):
    def __init__(self, table_in_every_layer):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.layers = nn.ModuleList(Layer(table_in_every_layer or i == 0) for i in range(3))
        self.head = nn.Linear(WIDTH, VOCAB)

    def forward(self, tokens):
        x, position_bias = self.embed(tokens), None
        for layer in self.layers:
            x, position_bias = layer(x, position_bias)
        return self.head(x)


def data():
    g = torch.Generator().manual_seed(1)
    tokens = torch.randint(0, VOCAB, (32, LENGTH), generator=g)
    return tokens, torch.roll(tokens, 2, dims=1)


def step(watch, table_in_every_layer=True):
    torch.manual_seed(0)
    model = Encoder(table_in_every_layer)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    tokens, target = data()
    grads = []
    with watch(model) as w:
        for _ in range(2):
            optimizer.zero_grad()
            loss = F.cross_entropy(model(tokens).view(-1, VOCAB), target.view(-1))
            loss.backward()
            grads.append(
                {
                    n: None if p.grad is None else p.grad.detach().clone()
                    for n, p in model.named_parameters()
                }
            )
            optimizer.step()
    return Run(w=w, model=model, before=before, grads=grads)


def truth(run):
    unused = ("layers.1.rel_bias.weight", "layers.2.rel_bias.weight")
    for g in run.grads:
        assert set(unused) <= set(g)
        for n, t in g.items():
            if n in unused:
                assert t is None, n
            else:
                assert bool(torch.isfinite(t).all()) and bool(t.abs().sum() > 0), n
    for n, p in run.model.named_parameters():
        assert torch.equal(p.detach(), run.before[n]) == (n in unused), n
