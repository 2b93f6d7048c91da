"""An LSTM encoder-decoder learning to reverse a sequence of tokens, trained with teacher forcing,
but the decoder is fed the labels themselves (``decoder_input = labels = target + <eos>``) instead
of the target shifted right behind ``<bos>``.  At position t the decoder reads the very token it is
asked to predict, so it learns to copy its input and ignore the encoder: after 80 (unwatched) Adam
steps its predictions equal the token it is fed at nearly every position and the training loss is
far below what the task allows this early, while the model has learned nothing it can use at
inference, where the next token is not known.  The watched step is the 81st: gradients are
finite and nonzero, autograd does nothing wrong.

Source: https://stevengong.co/notes/Teacher-Forcing ("gold target: <bos> I like eating mushrooms
<eos>; decoder_input: <bos> I like eating mushrooms; labels: I like eating mushrooms <eos>"; "the
model receives the ground truth output y(t) as input at time t + 1").  Adapted: the decoder input
is the labels row, not the shifted one.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://stevengong.co/notes/Teacher-Forcing"
DESCRIPTION = "seq2seq decoder fed the labels unshifted: it copies its input, loss near 0"
ASK = []
MUST = [
    [
        r"shift\w*",
        r"off[- ]by[- ]one",
        r"teacher forcing",
        r"(decoder|dec)[^\n]{0,40}(input|fed|reads)[^\n]{0,60}(label|target)",
        r"(label|target)s?[^\n]{0,60}(fed|given|passed|input)[^\n]{0,30}(decoder|dec)",
        r"cop(y|ies|ying)",
        r"leak\w*",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"no_grad", r"dead (units?|relu|neurons?)"]
V, L, WARMUP = 10, 6, 80
BOS = EOS = V  # index V: <bos> as a decoder input, <eos> as a class


class Seq2Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.src_emb = nn.Embedding(V, 16)
        self.encoder = nn.LSTM(16, 32, batch_first=True)
        self.tgt_emb = nn.Embedding(V + 1, 16)
        self.decoder = nn.LSTM(16, 32, batch_first=True)
        self.out = nn.Linear(32, V + 1)

    def forward(self, src, dec_in):
        _, state = self.encoder(self.src_emb(src))
        h, _ = self.decoder(self.tgt_emb(dec_in), state)
        return self.out(h)


def batch(g):
    src = torch.randint(0, V, (32, L), generator=g)
    tgt = src.flip(1)
    full = torch.cat([torch.full((32, 1), BOS), tgt, torch.full((32, 1), EOS)], dim=1)
    return src, full


def step(watch, shifted: bool = False):
    torch.manual_seed(0)
    model = Seq2Seq()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    g = torch.Generator().manual_seed(1)

    def io(full):
        labels = full[:, 1:]
        return (full[:, :-1] if shifted else labels), labels

    for _ in range(WARMUP):  # earlier steps, unwatched
        src, full = batch(g)
        dec_in, labels = io(full)
        opt.zero_grad()
        F.cross_entropy(model(src, dec_in).reshape(-1, V + 1), labels.reshape(-1)).backward()
        opt.step()
    src, full = batch(g)
    dec_in, labels = io(full)
    with watch(model) as w:
        opt.zero_grad()
        logits = model(src, dec_in)
        loss = F.cross_entropy(logits.reshape(-1, V + 1), labels.reshape(-1))
        loss.backward()
        opt.step()
    grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
    copied = (logits.argmax(-1) == dec_in).float().mean().item()
    return Run(w=w, loss=loss.item(), dec_in=dec_in, labels=labels, copied=copied, grads=grads)


def truth(run):
    assert torch.equal(run.dec_in, run.labels)  # the decoder reads what it must predict
    assert run.copied > 0.95  # and predicts the token it is fed
    assert run.loss < 0.3
    for n, gr in run.grads.items():
        assert bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0), n
