"""A causal language model with ALiBi whose bias matrix is built as ``m * (i - j)`` for query ``i``
and key ``j`` and added to the scores, the sign flipped: under the causal mask ``i - j >= 0``, so
each key gets a bonus that grows with its distance instead of a penalty.  In the steepest head
(slope 1/4, 24 positions) the last query's bonus for the first token is 5.75: that head attends to
the start of the sequence (the first four tokens take over half of the last query's weight, the last
four under 1%) rather than to the recent tokens.  The model trains on ordinary, finite gradients and
nothing raises; only the attention pattern is upside down.

Source: https://attention.kryvik.com/topics/17-alibi-attention-bias.html ("ALiBi adds a penalty to
attention scores based on how far apart positions are: e_ij = (q_i . k_j) / sqrt(d) - |i - j| . m";
"The bias is subtracted (not added), so distant positions get lower attention scores by default";
"ALiBi bias matrix (for distance-based bias): [ 0, -1, -2, -3, ... ] [ 1, 0, -1, -2, ... ] [ 2, 1,
0, -1, ... ]"; "Multiply each entry by head-specific m before adding to attention scores").
Adapted: the page's matrix, ``i - j``, multiplied by ``m`` and added under a causal mask (read that
way, the lower triangle the mask keeps is positive); a vocabulary of 16, 64 sequences of 24 where
each token is the previous plus one (mod 16), width 16, 4 heads with slopes ``2^(-8 h / 4)``, an FFN
``Linear(16, 32), ELU, Linear(32, 16)``, a head ``Linear(16, 16)``, Adam at 1e-3.
"""

import math

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://attention.kryvik.com/topics/17-alibi-attention-bias.html"
DESCRIPTION = "ALiBi bias +m (i - j) under a causal mask: distant keys favoured, heads look back"
ASK = []
MUST = [
    [
        r"alibi",
        r"(position|positional|attention) bias",
        r"sign",
    ],
    [
        r"sign\w*[^\n]{0,40}(flip\w*|wrong|invert\w*|revers\w*)",
        r"(flip\w*|wrong|invert\w*|revers\w*)[^\n]{0,40}sign",
        r"(bonus|reward\w*|favou?r\w*|prefer\w*)[^\n]{0,60}(distan\w*|far|first|start)",
        r"(grows?|increas\w*) with (the )?distance",
        r"(penalty|penali[sz]\w*)[^\n]{0,40}(missing|negat\w*|revers\w*)",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b"]
VOCAB, LENGTH, WIDTH, HEADS = 16, 24, 16, 4


class ALiBiLM(nn.Module):
    def __init__(self, sign):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.qkv = nn.Linear(WIDTH, 3 * WIDTH)
        self.o = nn.Linear(WIDTH, WIDTH)
        self.ffn = nn.Sequential(nn.Linear(WIDTH, 32), nn.ELU(), nn.Linear(32, WIDTH))
        self.head = nn.Linear(WIDTH, VOCAB)
        slopes = torch.tensor([2 ** (-8 * (h + 1) / HEADS) for h in range(HEADS)])
        pos = torch.arange(LENGTH)
        distance = (pos[:, None] - pos[None]).float()  # i - j
        bias = sign * slopes[:, None, None] * distance
        causal = torch.triu(torch.ones(LENGTH, LENGTH, dtype=torch.bool), 1)
        self.register_buffer("bias", bias.masked_fill(causal, -math.inf))

    def forward(self, tokens):
        b = tokens.shape[0]
        x = self.embed(tokens)
        q, k, v = self.qkv(x).view(b, LENGTH, 3, HEADS, -1).unbind(2)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(WIDTH // HEADS) + self.bias
        attn = scores.softmax(-1)
        x = x + self.o(torch.einsum("bhqk,bkhd->bqhd", attn, v).reshape(b, LENGTH, WIDTH))
        return self.head(x + self.ffn(x)), attn


def data():
    g = torch.Generator().manual_seed(1)
    start = torch.randint(0, VOCAB, (64, 1), generator=g)
    seq = (start + torch.arange(LENGTH + 1)) % VOCAB
    return seq[:, :-1], seq[:, 1:]


def step(watch, sign=1.0):
    torch.manual_seed(0)
    model = ALiBiLM(sign)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    tokens, target = data()
    with watch(model) as w:
        optimizer.zero_grad()
        logits, attn = model(tokens)
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), target.reshape(-1))
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, model=model, attn=attn.detach(), loss=float(loss.detach()), grads=grads)


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    last = run.attn[:, 0, -1]  # steepest head, last query: weights over the 24 keys
    assert float(last[:, :4].sum(-1).mean()) > 0.5  # most of it on the first four tokens
    assert float(last[:, -4:].sum(-1).mean()) < 0.01  # almost none on the last four
