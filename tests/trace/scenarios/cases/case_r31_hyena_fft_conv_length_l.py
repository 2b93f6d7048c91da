"""A Hyena-style language model whose long convolution is computed with the FFT at the sequence's
own length, ``irfft(rfft(v, n=L) * rfft(h, n=L), n=L)``, without padding to ``2L``.  A product of
FFTs of length ``L`` is a circular convolution: the output at position ``t`` sums ``h[k] v[(t - k)
mod L]``, and for ``k > t`` that is a position after ``t``, wrapped around from the end of the
sequence.  Every position reads tokens after it (changing only the last token changes the outputs at
every earlier position), and the next-token loss is learned from the future.  The loss is finite,
every gradient finite and nonzero; nothing raises.

Source: https://www.engineermaxxing.com/micro/lessons/hyena.html ("Hyena (Poli et al., 2023) takes a
completely different road to the same destination: convolution"; "a convolution with a filter as
long as the entire sequence, so it mixes every token with every other, just like attention"; "Hyena
fixes the first with implicit filters (generate the long filter from a tiny network) and the second
with the Fast Fourier Transform (compute the convolution in n-log-n time)").  Adapted: one Hyena
operator of order 1, ``y = x1 * conv(h, v)`` with ``x1, v`` from ``Linear(16, 32)``, the implicit
filter a ``Linear(5, 32), GELU, Linear(32, 16)`` of positional features times an exponential decay
window; a vocabulary of 16, 32 random sequences of 24 tokens, width 16, an FFN ``Linear(16, 32),
GELU, Linear(32, 16)``, a head ``Linear(16, 16)``, Adam at 1e-3.
"""

import math

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://www.engineermaxxing.com/micro/lessons/hyena.html"
DESCRIPTION = "Hyena long conv by FFT of length L, no padding: circular, each position reads ahead"
ASK = []
MUST = [
    [r"\bfft\b|fourier", r"convolution|\bconv\b", r"hyena", r"causal\w*"],
    [
        r"circular|wrap\w*[- ]around|wraps?",
        r"(pad\w*)[^\n]{0,40}(2\s?\*?\s?l\b|twice|double|missing|without)",
        r"(future|later|next|subsequent) (tokens?|positions?)",
        r"(not|non-?)[ -]?causal",
        r"(leak\w*|peek\w*|cheat\w*|look\w* ahead)",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"\bdead\b"]
VOCAB, LENGTH, WIDTH = 16, 24, 16


def fft_conv(v, h, padded):
    n = 2 * LENGTH if padded else LENGTH
    y = torch.fft.irfft(torch.fft.rfft(v, n=n) * torch.fft.rfft(h, n=n), n=n)
    return y[..., :LENGTH]


class HyenaLM(nn.Module):
    def __init__(self, padded):
        super().__init__()
        self.padded = padded
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.in_proj = nn.Linear(WIDTH, 2 * WIDTH)
        self.filter = nn.Sequential(nn.Linear(5, 32), nn.GELU(), nn.Linear(32, WIDTH))
        self.out_proj = nn.Linear(WIDTH, WIDTH)
        self.ffn = nn.Sequential(nn.Linear(WIDTH, 32), nn.GELU(), nn.Linear(32, WIDTH))
        self.head = nn.Linear(WIDTH, VOCAB)
        t = torch.arange(LENGTH).float()[:, None] / LENGTH
        features = torch.cat(
            [
                t,
                torch.sin(2 * math.pi * t),
                torch.cos(2 * math.pi * t),
                torch.sin(4 * math.pi * t),
                torch.cos(4 * math.pi * t),
            ],
            1,
        )
        self.register_buffer("features", features)
        self.register_buffer("window", torch.exp(-3.0 * t))

    def forward(self, tokens):
        x = self.embed(tokens)
        x1, v = self.in_proj(x).chunk(2, -1)  # (B, L, D) each
        h = (self.filter(self.features) * self.window).T  # (D, L): one long filter per channel
        y = x1 * fft_conv(v.transpose(1, 2), h, self.padded).transpose(1, 2)
        x = x + self.out_proj(y)
        return self.head(x + self.ffn(x))


def data():
    g = torch.Generator().manual_seed(1)
    seq = torch.randint(0, VOCAB, (32, LENGTH + 1), generator=g)
    return seq[:, :-1], seq[:, 1:]


def step(watch, padded=False):
    torch.manual_seed(0)
    model = HyenaLM(padded)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    tokens, target = data()
    with watch(model) as w:
        optimizer.zero_grad()
        logits = model(tokens)
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), target.reshape(-1))
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    with torch.no_grad():  # a probe after the step: change only the last token of each sequence
        changed = tokens.clone()
        changed[:, -1] = (changed[:, -1] + 1) % VOCAB
        shift = (model(changed) - model(tokens))[:, :-1].abs().amax()
    return Run(w=w, model=model, loss=float(loss.detach()), grads=grads, shift=float(shift))


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    assert run.shift > 1e-3  # earlier positions read the last token
