"""A pointer network learning to sort, its decoder masking the positions already pointed to, with
the mask updated one step early: at step ``t`` the position of the step's own target is marked
visited before the scores are computed, so its score is ``-inf`` before it can be chosen.  Every
step's target log-probability is ``-inf`` (a cross-entropy of ``inf``), and at the last step every
position is masked: the softmax of a row of ``-inf`` is NaN, and the loss is NaN.  The gradients
are finite: ``masked_fill``'s backward zeroes the gradient at every masked score, the last row's NaN
among them, and the other rows send ``softmax - onehot`` with the target's probability 0, pushing
every unmasked position down.  Adam steps on them; nothing raises.

Source: https://www.emergentmind.com/topics/pointer-network-decoder ("A Pointer-Network decoder is a
neural architecture for autoregressive sequence generation where, at each step, the output is a
discrete \"pointer\" to a location or span within the model's variable-length input sequence"; "The
decoder state is updated by consuming the embedding of the previously selected input (pointer) or a
special start token"; "Attention scores over input positions are computed").  Adapted: the mask of
visited positions updated with the step's target before the step's scores (the page gives the
decoder, not the slip); 16 sequences of 6 numbers, the target their ascending order, encoder
``Linear(1, 32), Tanh, Linear(32, 32)``, a ``GRUCell(32, 32)`` decoder fed the embedding of the
previous target (teacher forcing) from a learned start vector, additive attention ``v^T tanh(W1 e_j
+ W2 h)``, Adam at 1e-3.
"""

import math

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://www.emergentmind.com/topics/pointer-network-decoder"
DESCRIPTION = "pointer net masks the step's target before scoring: NaN loss, finite gradients"
ASK = []
MUST = [
    [r"\bnan\b|non-?finite|\binf\b|infinit"],
    [
        r"-inf",
        r"mask\w*",
        r"masked_fill",
        r"all (positions|entries|scores|logits)[^\n]{0,40}(masked|-inf)",
        r"(row|step)[^\n]{0,40}(all|entirely|fully) (masked|-inf)",
        r"softmax[^\n]{0,60}(-inf|empty|all)",
        r"visited",
        r"off[- ]by[- ]one",
    ],
]
MUST_NOT = [FALSE_OK, r"\bdead\b", r"requires_grad\s*(=|is|was)?\s*False"]
N, H = 6, 32


class PointerNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(1, H), nn.Tanh(), nn.Linear(H, H))
        self.start = nn.Parameter(torch.randn(H) * 0.1)
        self.decoder = nn.GRUCell(H, H)
        self.w1 = nn.Linear(H, H, bias=False)
        self.w2 = nn.Linear(H, H)
        self.v = nn.Linear(H, 1, bias=False)

    def forward(self, x, target, early_mask):
        e = self.encoder(x)  # (B, N, H)
        h = torch.tanh(e.mean(1))
        inp = self.start.expand(x.shape[0], H)
        visited = torch.zeros(x.shape[0], N, dtype=torch.bool)
        logits = []
        for t in range(N):
            pick = target[:, t : t + 1]
            if early_mask:
                visited = visited.scatter(1, pick, True)
            h = self.decoder(inp, h)
            scores = self.v(torch.tanh(self.w1(e) + self.w2(h)[:, None])).squeeze(-1)
            logits.append(scores.masked_fill(visited, float("-inf")))
            if not early_mask:
                visited = visited.scatter(1, pick, True)
            inp = e.gather(1, pick[..., None].expand(-1, -1, H)).squeeze(1)
        return torch.stack(logits, 1)  # (B, N steps, N positions)


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.rand(16, N, 1, generator=g)
    return x, x.squeeze(-1).argsort(1)


def step(watch, early_mask=True):
    torch.manual_seed(0)
    model = PointerNet()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, target = data()
    with watch(model) as w:
        optimizer.zero_grad()
        logits = model(x, target, early_mask)
        loss = F.cross_entropy(logits.reshape(-1, N), target.reshape(-1))
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, logits=logits.detach(), target=target, loss=float(loss.detach()), grads=grads)


def truth(run):
    picked = run.logits.gather(2, run.target[..., None]).squeeze(-1)
    assert bool(torch.isneginf(picked).all())  # every step's target already masked
    assert bool(torch.isneginf(run.logits[:, -1]).all())  # the last step: every position masked
    assert math.isnan(run.loss)
    for n, g in run.grads.items():  # masked_fill's backward drops the NaN: finite gradients
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
