"""An RNN-T (transducer) trained with its loss computed by the forward recursion over the ``T x (U +
1)`` lattice in probability space: ``alpha[t, u] = alpha[t - 1, u] * P(blank) + alpha[t, u - 1] *
P(y_u)``, then ``loss = -log(alpha[T - 1, U] * P(blank))``, as the sum over alignment paths of
products of probabilities reads.  Each path multiplies ``T + U = 80`` probabilities near ``1/29``
(29 outputs at initialization); the sum over paths is about ``e^-240``, ``1e-104``, far below
float32's smallest number (``1e-45``).  The lattice underflows to exactly 0, ``log(0) = -inf``, the
loss is ``inf`` and the backward's ``-1/0`` turns into NaN in every parameter's gradient (encoder,
prediction network and joint network).  Nothing raises.

Source: https://www.textbookofai.com/glossary/rnn-transducer.html ("Joint network f^joint(h^enc_t,
h^pred_u) = W_o tanh(W_e h^enc_t + W_p h^pred_u), projecting to logits over the vocabulary plus
blank"; "The probability of label sequence y marginalises over all monotonic alignment paths: P(y |
x) = sum over paths of the product of p(pi_{t,u} | t, u)"; "A two-dimensional forward-backward
dynamic program computes this"; "The loss is -log P(y | x) and gradients flow into all three
networks").  Adapted: the recursion written on probabilities (the page gives the sum of products); 4
utterances of 60 frames of 8 features, 20 labels each from 28 symbols plus blank, a GRU encoder and
a GRU prediction network of 16 units, the joint network as the page writes it, Adam at 1e-3.
"""

import math

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://www.textbookofai.com/glossary/rnn-transducer.html"
DESCRIPTION = (
    "RNN-T loss by the lattice recursion on probabilities: underflows to 0, inf, NaN grads"
)
ASK = []
MUST = [
    [r"\bnan\b|\binf\b|non-?finite|infinit\w*"],
    [
        r"underflow\w*",
        r"log\s?\(?\s?0\)?|log of (zero|0)",
        r"probabilit\w* space|not in log[- ]space|log[- ]space",
        r"logsumexp|logaddexp|log-sum-exp",
        r"product of (many )?probabilit\w*|too small|(rounds?|rounded) to (zero|0)",
        r"lattice|recursion|dynamic program\w*",
    ],
]
MUST_NOT = [FALSE_OK, r"\bdead\b", r"requires_grad\s*(=|is|was)?\s*False"]
BATCH, FRAMES, LABELS, SYMBOLS, FEATURES, HIDDEN = 4, 60, 20, 29, 8, 16  # symbol 0 is blank


class Transducer(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.GRU(FEATURES, HIDDEN, batch_first=True)
        self.embed = nn.Embedding(SYMBOLS, HIDDEN)
        self.predictor = nn.GRU(HIDDEN, HIDDEN, batch_first=True)
        self.w_e = nn.Linear(HIDDEN, HIDDEN)
        self.w_p = nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.w_o = nn.Linear(HIDDEN, SYMBOLS)

    def forward(self, frames, labels):
        enc, _ = self.encoder(frames)  # (B, T, H)
        start = torch.zeros_like(labels[:, :1])  # blank starts the prediction network
        pred, _ = self.predictor(self.embed(torch.cat([start, labels], 1)))  # (B, U + 1, H)
        joint = torch.tanh(self.w_e(enc)[:, :, None] + self.w_p(pred)[:, None])
        return F.log_softmax(self.w_o(joint), -1)  # (B, T, U + 1, V)


def lattice_terms(logp, labels):
    blank = logp[..., 0]  # (B, T, U + 1)
    emit = logp[:, :, :-1].gather(-1, labels[:, None, :, None].expand(-1, FRAMES, -1, 1))[..., 0]
    return blank, emit  # emit[b, t, u]: log P(y_{u+1} | t, u)


def loss_probability_space(logp, labels):
    blank, emit = (x.exp() for x in lattice_terms(logp, labels))
    alpha = [[None] * (LABELS + 1) for _ in range(FRAMES)]
    for t in range(FRAMES):
        for u in range(LABELS + 1):
            if t == 0 and u == 0:
                alpha[t][u] = torch.ones(BATCH)
                continue
            terms = []
            if t > 0:
                terms.append(alpha[t - 1][u] * blank[:, t - 1, u])
            if u > 0:
                terms.append(alpha[t][u - 1] * emit[:, t, u - 1])
            alpha[t][u] = sum(terms)
    final = alpha[FRAMES - 1][LABELS] * blank[:, FRAMES - 1, LABELS]
    return -torch.log(final).mean(), final


def loss_log_space(logp, labels):
    blank, emit = lattice_terms(logp, labels)
    alpha = [[None] * (LABELS + 1) for _ in range(FRAMES)]
    for t in range(FRAMES):
        for u in range(LABELS + 1):
            if t == 0 and u == 0:
                alpha[t][u] = torch.zeros(BATCH)
            elif t == 0:
                alpha[t][u] = alpha[t][u - 1] + emit[:, t, u - 1]
            elif u == 0:
                alpha[t][u] = alpha[t - 1][u] + blank[:, t - 1, u]
            else:
                alpha[t][u] = torch.logaddexp(
                    alpha[t - 1][u] + blank[:, t - 1, u], alpha[t][u - 1] + emit[:, t, u - 1]
                )
    final = alpha[FRAMES - 1][LABELS] + blank[:, FRAMES - 1, LABELS]
    return -final.mean(), final


def data():
    g = torch.Generator().manual_seed(1)
    frames = torch.randn(BATCH, FRAMES, FEATURES, generator=g)
    labels = torch.randint(1, SYMBOLS, (BATCH, LABELS), generator=g)
    return frames, labels


def step(watch, rnnt_loss=loss_probability_space):
    torch.manual_seed(0)
    model = Transducer()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    frames, labels = data()
    with watch(model) as w:
        optimizer.zero_grad()
        logp = model(frames, labels)
        loss, final = rnnt_loss(logp, labels)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(
        w=w,
        model=model,
        before=before,
        logp=logp.detach(),
        final=final.detach(),
        loss=float(loss.detach()),
        grads=grads,
    )


def truth(run):
    assert bool(torch.isfinite(run.logp).all())  # the network's outputs are fine
    assert bool((run.final == 0).all())  # the lattice underflowed to exactly 0
    assert run.loss == math.inf
    for n, g in run.grads.items():
        assert bool(torch.isnan(g).any()), n
