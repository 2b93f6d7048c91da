"""The Annotated Transformer's embedding, ``self.lut(x) * math.sqrt(self.d_model)``, on top of
``nn.Embedding``'s default initialisation N(0, 1).  The paper's scale goes with embeddings of
variance 1 / d_model (it shares them with the output projection); on unit-variance rows it makes
every token vector of norm about ``d_model`` (32 here: entries of standard deviation 5.7), which
drowns the sinusoidal positions (amplitude 1) and blows up the attention scores: the softmax
rows are nearly one-hot (about half of them put more than 99% of their weight on one token; mean
entropy 0.3 nats against 2.1 at the paper's scale and 2.3 for uniform weights over 10 tokens),
where the softmax's derivative is nearly zero.  Nothing raises; nothing is NaN.

Source: https://machinelearningreference-raw.pages.dev/01-Statistical-(machine)-learning-(data-science)/30-Model-classes/10-Neural-networks/03-Architectures/Transformer-models/Annotated-Transformer,-The/11-Implementation-of-the-embedding-model
(``return self.lut(x) * math.sqrt(self.d_model)``; "The weights of nn.Embedding are initialized
according to the Gaussian , so definitionally they have variance 1"; "By scaling these initial
weights by ...").  Adapted: ``d_model = 32``, a vocabulary of 30, sinusoidal positions, one
``nn.MultiheadAttention(32, 4)`` with a residual, mean pooling and a ``Linear(32, 3)`` head, 32
sequences of 10 tokens, Adam at 1e-3, the first step watched.
"""

import math

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://machinelearningreference-raw.pages.dev/01-Statistical-(machine)-learning-(data-"
    "science)/30-Model-classes/10-Neural-networks/03-Architectures/Transformer-models/Annotated-"
    "Transformer,-The/11-Implementation-of-the-embedding-model"
)
DESCRIPTION = "embedding * sqrt(d_model) on N(0, 1) rows: attention softmax saturated, q/k starved"
ASK = []
MUST = [
    [
        r"sqrt\(?\s*d_model",
        r"√",
        r"embedding\w* (is |are )?(scale|scaling|scaled|too large|large)",
        r"scaled embeddings?",
        r"N\(0,\s*1\)",
        r"(default|unit[- ]variance|standard normal) init\w*",
        r"embedding (norm|magnitude|variance|scale)",
    ],
    [r"saturat\w*", r"softmax", r"attention", r"one-?hot", r"vanish\w*"],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"all[- ]zero"]
D_MODEL, VOCAB, LENGTH = 32, 30, 10


def sinusoidal(length, d):
    position = torch.arange(length).unsqueeze(1)
    div = torch.exp(torch.arange(0, d, 2) * (-math.log(10000.0) / d))
    pe = torch.zeros(length, d)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(position * div), torch.cos(position * div)
    return pe


class Encoder(nn.Module):
    def __init__(self, scaled_init):
        super().__init__()
        self.lut = nn.Embedding(VOCAB, D_MODEL)
        if scaled_init:
            nn.init.normal_(self.lut.weight, std=D_MODEL**-0.5)
        self.register_buffer("pe", sinusoidal(LENGTH, D_MODEL))
        self.attn = nn.MultiheadAttention(D_MODEL, 4, dropout=0.0, batch_first=True)
        self.head = nn.Linear(D_MODEL, 3)

    def forward(self, ids):
        x = self.lut(ids) * math.sqrt(D_MODEL) + self.pe[: ids.shape[1]]
        a, weights = self.attn(x, x, x, need_weights=True, average_attn_weights=False)
        self.weights = weights.detach()
        return self.head((x + a).mean(1))


def data():
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, VOCAB, (32, LENGTH), generator=g)
    low = (ids < 10).sum(1)
    return ids, (low > 3).long() + (low > 5).long()


def step(watch, scaled_init=False):
    torch.manual_seed(0)
    model = Encoder(scaled_init)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    ids, y = data()
    with watch(model) as w:
        optimizer.zero_grad()
        F.cross_entropy(model(ids), y).backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, model=model, weights=model.weights, grads=grads)


def entropy(run):
    w = run.weights.clamp_min(1e-30)
    return -(w * w.log()).sum(-1).mean().item()


def peaked(run):
    return (run.weights.max(-1).values > 0.99).float().mean().item()


def truth(run):
    assert peaked(run) > 0.4  # many attention rows nearly one-hot
    assert entropy(run) < 0.5  # against log(10) = 2.3 for uniform weights
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()), n
