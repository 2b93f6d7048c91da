"""A one-layer causal language model with differential attention (the Differential Transformer):
each head splits its queries and keys into two halves, computes two softmax maps ``A1 =
softmax(Q1 K1^T / s)`` and ``A2 = softmax(Q2 K2^T / s)`` and attends with ``(A1 - lambda A2) V``.
The causal mask (``-inf`` above the diagonal) is added to the first map's scores only: ``A2`` is
computed from unmasked scores, so every position but the last reads the values of the positions
after it through ``-lambda A2``.  Trained on next-token prediction, the model sees the token it must
predict: after the step the logits at the first position change when only the last token of the
sequence changes.  Every gradient is finite and nonzero; nothing raises.

Source: https://hexdocs.pm/edifice/Edifice.Attention.DiffTransformer.html ("For each head, Q and K
are split into two halves: A1 = softmax(Q1 @ K1^T / sqrt(d/2)) A2 = softmax(Q2 @ K2^T / sqrt(d/2))
DiffAttn = (A1 - lambda * A2) @ V"; "Shared noise patterns (tokens that attract attention
universally) cancel out").  Adapted: the paper's re-parameterised lambda (``exp(lq1 . lk1) - exp(lq2
. lk2) + lambda_init``, vectors drawn from N(0, 0.1), ``lambda_init = 0.8 - 0.6 exp(-0.3 (l - 1))``
at ``l = 1``), two heads with halves of width 8 and values of width 16, the per-head RMS
normalisation scaled by ``1 - lambda_init``, a vocabulary of 16, width 32, one layer, sequences of
12, the mask added to the first map only; Adam at 1e-3.
"""

import math

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://hexdocs.pm/edifice/Edifice.Attention.DiffTransformer.html"
DESCRIPTION = "differential attention, causal mask on A1 only: A2 reads future tokens (label leak)"
ASK = []
MUST = [
    [
        r"causal",
        r"\bmask\w*",
        r"future",
        r"look[- ]?ahead",
        r"leak\w*",
        r"later (tokens?|positions?)",
    ],
    [
        r"second (attention )?(map|softmax|scores?)",
        r"\bA_?2\b",
        r"\b(q2|k2|scores?_?2|attn_?2)\b",
        r"both (maps|softmax\w*|attention maps|score)",
        r"one of the two",
        r"differential",
        r"lambda|λ",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b"]
VOCAB, WIDTH, HEADS, HALF, LENGTH = 16, 32, 2, 8, 12
LAMBDA_INIT = 0.8 - 0.6 * math.exp(-0.3 * (1 - 1))


class DiffAttention(nn.Module):
    def __init__(self, both_masked):
        super().__init__()
        self.both_masked = both_masked
        self.q = nn.Linear(WIDTH, HEADS * 2 * HALF, bias=False)
        self.k = nn.Linear(WIDTH, HEADS * 2 * HALF, bias=False)
        self.v = nn.Linear(WIDTH, HEADS * 2 * HALF, bias=False)
        self.out = nn.Linear(HEADS * 2 * HALF, WIDTH, bias=False)
        self.lq1, self.lk1, self.lq2, self.lk2 = (
            nn.Parameter(0.1 * torch.randn(HALF)) for _ in range(4)
        )
        self.sub_norm = nn.RMSNorm(2 * HALF)

    def forward(self, x):
        b, t, _ = x.shape
        q = self.q(x).view(b, t, HEADS, 2, HALF).permute(3, 0, 2, 1, 4)  # (2, B, H, T, HALF)
        k = self.k(x).view(b, t, HEADS, 2, HALF).permute(3, 0, 2, 1, 4)
        v = self.v(x).view(b, t, HEADS, 2 * HALF).transpose(1, 2)  # (B, H, T, 2 HALF)
        causal = torch.full((t, t), float("-inf")).triu(1)
        s1 = q[0] @ k[0].transpose(-1, -2) / math.sqrt(HALF) + causal
        s2 = q[1] @ k[1].transpose(-1, -2) / math.sqrt(HALF)
        if self.both_masked:
            s2 = s2 + causal
        a1, a2 = s1.softmax(-1), s2.softmax(-1)
        lam = torch.exp(self.lq1 @ self.lk1) - torch.exp(self.lq2 @ self.lk2) + LAMBDA_INIT
        heads = self.sub_norm((a1 - lam * a2) @ v) * (1 - LAMBDA_INIT)
        return self.out(heads.transpose(1, 2).reshape(b, t, -1)), a2


class LM(nn.Module):
    def __init__(self, both_masked):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.pos = nn.Parameter(0.1 * torch.randn(LENGTH, WIDTH))
        self.norm1, self.norm2 = nn.LayerNorm(WIDTH), nn.LayerNorm(WIDTH)
        self.attn = DiffAttention(both_masked)
        self.head = nn.Linear(WIDTH, VOCAB)

    def forward(self, tokens):
        h = self.embed(tokens) + self.pos[: tokens.shape[1]]
        a, a2 = self.attn(self.norm1(h))
        return self.head(self.norm2(h + a)), a2


def data():
    g = torch.Generator().manual_seed(1)
    return torch.randint(0, VOCAB, (16, LENGTH + 1), generator=g)


def step(watch, both_masked=False):
    torch.manual_seed(0)
    model = LM(both_masked)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    seq = data()
    inputs, targets = seq[:, :-1], seq[:, 1:]
    with watch(model) as w:
        optimizer.zero_grad()
        logits, a2 = model(inputs)
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    with torch.no_grad():  # probe: change only the last input token
        changed = inputs.clone()
        changed[:, -1] = (changed[:, -1] + 1) % VOCAB
        moved = (model(changed)[0] - model(inputs)[0])[:, :-1].abs().max()
    future_weight = a2.detach().triu(1).sum(-1)[..., 0].mean()  # first query, keys after it
    return Run(
        w=w, grads=grads, loss=float(loss.detach()), moved=float(moved),
        future_weight=float(future_weight),
    )  # fmt: skip


def truth(run):
    assert math.isfinite(run.loss)
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert run.future_weight > 0.8  # the first query's A2 weight on later keys
    assert run.moved > 1e-3  # earlier positions read the last token
