"""A half-precision text classifier whose RMSNorm is the exercise's, ``x / sqrt(mean(x**2) + eps)``
with ``eps = 1e-8``, computed in the model's float16.  ``1e-8`` is below float16's smallest
subnormal (about 6e-8): added to a float16 tensor it rounds away, and for the padding positions,
whose embedding row is exactly zero (``padding_idx=0``), the norm is ``sqrt(0 + 0) = 0`` and the
output ``0 / 0 = NaN``.  The masked mean pooling multiplies those rows by 0, which keeps NaN: the
pooled features, the logits and the loss are NaN, and every gradient is NaN.

Source: https://github.com/loftusa/TorchLeet ("Implement RMS Normalization"; ``def __init__(self,
dim: int, eps: float = 1e-8)``; ``norm = torch.sqrt(x.pow(2).mean(dim=-1, keepdim=True) +
self.eps)  # RMS``; ``return (x / norm) * self.scale``).  Adapted: the exercise's module in a
model cast to float16 with ``.half()``: ``Embedding(20, 16, padding_idx=0)``, RMSNorm,
``Linear(16, 16)``, ``Tanh``, a masked mean over the tokens, ``Linear(16, 3)``, the loss taken on
``logits.float()``; 32 sequences of 5 to 10 tokens padded to 10, SGD at 0.1.
"""

import copy

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/loftusa/TorchLeet"
DESCRIPTION = "float16 RMSNorm with eps=1e-8 (rounds to 0): zero padding rows give 0/0 = NaN"
ASK = []
MUST = [
    [r"\bnan\b", r"non-?finite"],
    [
        r"rms ?norm",
        r"\bnorm\.",
        r"\bnorm\b",
        r"sqrt",
        r"\beps\w*",
        r"float ?16",
        r"fp16",
        r"\bhalf\b",
        r"underflow\w*",
        r"\bdiv\w*",
        r"0 ?/ ?0",
    ],
]
MUST_NOT = [FALSE_OK, r"explod", r"learning rate"]
EPS = 1e-8


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=EPS, upcast=False):
        super().__init__()
        self.eps, self.upcast = eps, upcast
        self.scale = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        if self.upcast:  # the statistics in float32, the result back in x's dtype
            xf = x.float()
            norm = torch.sqrt(xf.pow(2).mean(dim=-1, keepdim=True) + self.eps)
            return (xf / norm).to(x.dtype) * self.scale
        norm = torch.sqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return (x / norm) * self.scale


class Classifier(nn.Module):
    def __init__(self, upcast=False):
        super().__init__()
        self.embed = nn.Embedding(20, 16, padding_idx=0)
        self.norm = RMSNorm(16, upcast=upcast)
        self.ff = nn.Linear(16, 16)
        self.head = nn.Linear(16, 3)

    def forward(self, tokens):
        mask = (tokens != 0).unsqueeze(-1).to(self.head.weight.dtype)
        h = torch.tanh(self.ff(self.norm(self.embed(tokens))))
        return self.head((h * mask).sum(1) / mask.sum(1))


def data():
    g = torch.Generator().manual_seed(1)
    tokens = torch.randint(1, 20, (32, 10), generator=g)
    lengths = torch.randint(5, 11, (32,), generator=g)
    tokens[torch.arange(10).view(1, 10) >= lengths.view(32, 1)] = 0
    return tokens, (tokens % 3).mode(1).values


def step(watch, upcast=False):
    torch.manual_seed(0)
    model = Classifier(upcast).half()
    start = copy.deepcopy(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    tokens, labels = data()
    with watch(model) as w:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(tokens).float(), labels)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    with torch.no_grad():
        normed = start.norm(start.embed(tokens))
    return Run(w=w, model=model, grads=grads, loss=loss.detach(), normed=normed, tokens=tokens)


def truth(run):
    assert float(torch.tensor(0.0, dtype=torch.float16) + EPS) == 0.0  # eps rounds away
    pad = run.tokens == 0
    assert bool(pad.any()) and bool(torch.isnan(run.normed[pad]).all())
    assert bool(torch.isfinite(run.normed[~pad]).all())
    assert torch.isnan(run.loss)
    for n, g in run.grads.items():
        assert bool(torch.isnan(g).any()), n
