"""A healthy step with intended zeros: attention heads pruned by a fixed head mask, a buffer
``[1, 0, 1, 0]`` that multiplies each head's output before the output projection.  Heads 1 and 3
contribute nothing, so the rows of the query, key and value projection that belong to them get
an exactly zero gradient, and so do the output projection's columns that read them; everything
else (the two kept heads, the embedding, the head) gets a finite, nonzero gradient and the loss
falls.  Nothing is wrong: the zeros are the pruning.

Source: https://www.onenoughtone.com/problems/attention-head-pruning ("We have 4 attention heads
with importance scores [0.8, 0.3, 0.9, 0.2]"; "Heads 1 and 3 are pruned as they have the lowest
importance scores"; "a significant portion of attention heads can be removed without
substantially degrading model performance").  Adapted: the mask kept as a buffer instead of
slicing the weights, a ``Linear(6, 16)`` embedding, a four-head self-attention written out
(``Linear(16, 48)`` for q, k, v, ``Linear(16, 16)`` output), mean pooling, a ``Linear(16, 3)``
head, 64 sequences of 8 steps, Adam at 1e-3.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://www.onenoughtone.com/problems/attention-head-pruning"
DESCRIPTION = "healthy: heads 1 and 3 pruned by a mask buffer: their q/k/v rows get zero gradient"
ASK = []
MUST = [[HEALTHY_OK, r"head[_ ]mask", r"prun\w*", r"masked heads?"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"\bdead\b",
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
]
HEADS, DIM = 4, 4


class MaskedAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(6, 16)
        self.qkv = nn.Linear(16, 3 * 16)
        self.out = nn.Linear(16, 16)
        self.head = nn.Linear(16, 3)
        self.register_buffer("head_mask", torch.tensor([1.0, 0.0, 1.0, 0.0]))

    def forward(self, x):
        b, t, _ = x.shape
        h = self.embed(x)
        q, k, v = self.qkv(h).view(b, t, 3, HEADS, DIM).unbind(2)
        q, k, v = (z.transpose(1, 2) for z in (q, k, v))  # (b, heads, t, dim)
        att = torch.softmax(q @ k.transpose(-1, -2) / DIM**0.5, dim=-1) @ v
        att = att * self.head_mask.view(1, HEADS, 1, 1)
        return self.head((h + self.out(att.transpose(1, 2).reshape(b, t, 16))).mean(1))


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 8, 6, generator=g)
    return x, x.mean(1)[:, :3].argmax(1)


def step(watch):
    torch.manual_seed(0)
    model = MaskedAttention()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = data()
    with watch(model) as w:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    with torch.no_grad():
        after = F.cross_entropy(model(x), y).item()
    return Run(w=w, model=model, grads=grads, loss=loss.item(), after=after)


def truth(run):
    pruned = torch.zeros(3, HEADS, DIM, dtype=torch.bool)
    pruned[:, [1, 3]] = True
    rows = pruned.reshape(-1)  # q, k, v rows of heads 1 and 3
    for name in ("qkv.weight", "qkv.bias"):
        g = run.grads[name]
        assert bool((g[rows] == 0).all()) and bool(
            (g[~rows].abs().sum(-1 if g.dim() > 1 else 0) > 0).all()
        )
    cols = pruned[0].reshape(-1)
    g = run.grads["out.weight"]
    assert bool((g[:, cols] == 0).all()) and bool(g[:, ~cols].abs().sum() > 0)
    for n in ("embed.weight", "embed.bias", "out.bias", "head.weight", "head.bias"):
        assert bool(run.grads[n].abs().sum() > 0), n
    assert run.after < run.loss
