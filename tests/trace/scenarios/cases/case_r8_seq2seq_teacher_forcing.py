"""Control: a GRU encoder-decoder trained with teacher forcing.  The decoder's input is the target
shifted right (``<bos>`` then the target without its last token) and it is trained to predict the
target itself; padded target positions are left out of the cross-entropy with ``ignore_index``.
One Adam step: the encoder gets its gradient through the hidden state it hands the decoder, every
gradient is finite and nonzero.

Source: https://brain.tamnd.com/write/book/dl-pytorch/05/19/2.md ("Teacher forcing means that,
during training, the previous tokens are the correct tokens from the dataset, not the model's own
previous predictions"; "The decoder input is shifted right"; "This lets the whole target sequence
be trained in parallel").
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://brain.tamnd.com/write/book/dl-pytorch/05/19/2.md"
DESCRIPTION = "control: GRU seq2seq, decoder input = target shifted right, pads ignored: healthy"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"target[^\n]{0,60}(carr|sen)\w* gradient",
    r"all-zero",
    r"no gradient",
]

PAD, BOS, VOCAB = 0, 1, 12


class Seq2Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.src_emb = nn.Embedding(VOCAB, 16)
        self.tgt_emb = nn.Embedding(VOCAB, 16)
        self.encoder = nn.GRU(16, 24, batch_first=True)
        self.decoder = nn.GRU(16, 24, batch_first=True)
        self.out = nn.Linear(24, VOCAB)

    def forward(self, src, dec_in):
        _, h = self.encoder(self.src_emb(src))
        y, _ = self.decoder(self.tgt_emb(dec_in), h)
        return self.out(y)


def step(watch):
    torch.manual_seed(0)
    model = Seq2Seq()
    g = torch.Generator().manual_seed(1)
    src = torch.randint(2, VOCAB, (4, 7), generator=g)
    tgt = torch.randint(2, VOCAB, (4, 6), generator=g)
    tgt[1, 4:] = PAD  # a shorter target, padded
    tgt[3, 3:] = PAD
    dec_in = torch.cat([torch.full((4, 1), BOS), tgt[:, :-1]], dim=1)  # shifted right
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    with watch(model) as w:
        opt.zero_grad()
        logits = model(src, dec_in)
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), tgt.reshape(-1), ignore_index=PAD)
        loss.backward()
        grads = {n: p.grad.clone() for n, p in model.named_parameters()}
        opt.step()
    return Run(w=w, dec_in=dec_in, tgt=tgt, grads=grads, loss=loss.item())


def truth(run):
    assert torch.equal(run.dec_in[:, 1:], run.tgt[:, :-1])  # the decoder sees only the past
    assert run.loss == run.loss
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
