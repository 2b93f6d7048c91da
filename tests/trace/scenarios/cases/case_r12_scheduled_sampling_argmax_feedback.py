"""Control, a step suspected wrongly: a GRU decoder trained with scheduled sampling, at each of 6
steps feeding back either the gold token or, with probability 0.5, its own previous prediction
``logits.argmax(-1)``.  ``argmax`` returns integer indices without gradient, so no gradient flows
from a step's loss back through the earlier decision that chose its input token: that is how
scheduled sampling (Bengio et al., 2015) is defined, not a defect.  The hidden state still carries
the gradient across steps, and every parameter (encoder, embedding, GRU cell, output layer) gets a
finite, nonzero gradient; every token of the vocabulary is fed as an input at least once, so every
embedding row gets one too.

Source: https://www.sciencestack.ai/paper/1704.06970 ("Differentiable Scheduled Sampling for
Credit Assignment ... introducing differentiable relaxations of greedy decoding, enabling
continuous backpropagation through earlier decoding decisions"; "outperforms cross-entropy and
conventional scheduled sampling").
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://www.sciencestack.ai/paper/1704.06970"
DESCRIPTION = "control: scheduled sampling feeding back argmax tokens (no grad through them)"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"all-zero",
    r"no gradient for",
    r"dead (units?|relu|neurons?)",
]
VOCAB, STEPS, BOS = 10, 6, 0


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(4, 16), nn.Tanh())
        self.emb = nn.Embedding(VOCAB, 8)
        self.cell = nn.GRUCell(8, 16)
        self.out = nn.Linear(16, VOCAB)

    def forward(self, src, tgt, use_prediction):
        h = self.enc(src)
        token = torch.full((src.shape[0],), BOS)
        logits_all, inputs = [], []
        for t in range(tgt.shape[1]):
            inputs.append(token)
            h = self.cell(self.emb(token), h)
            logits = self.out(h)
            logits_all.append(logits)
            predicted = logits.argmax(-1)  # integer indices: no gradient
            token = torch.where(use_prediction[:, t], predicted, tgt[:, t])
        return torch.stack(logits_all, 1), torch.stack(inputs, 1)


def step(watch):
    torch.manual_seed(0)
    model = Decoder()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    src = torch.randn(24, 4, generator=g)
    tgt = torch.randint(0, VOCAB, (24, STEPS), generator=g)
    grads, fed = [], []
    with watch(model) as w:
        for _ in range(2):
            use_prediction = torch.rand(24, STEPS, generator=g) < 0.5
            opt.zero_grad()
            logits, inputs = model(src, tgt, use_prediction)
            loss = F.cross_entropy(logits.reshape(-1, VOCAB), tgt.reshape(-1))
            loss.backward()
            grads.append({n: p.grad.detach().clone() for n, p in model.named_parameters()})
            fed.append((inputs, use_prediction))
            opt.step()
    return Run(w=w, grads=grads, fed=fed)


def truth(run):
    for inputs, use_prediction in run.fed:
        assert bool(use_prediction[:, :-1].any()) and bool((~use_prediction[:, :-1]).any())
        assert set(inputs.unique().tolist()) == set(range(VOCAB))
    for grads in run.grads:
        for n, gr in grads.items():
            assert bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0), n
        assert bool((grads["emb.weight"].abs().sum(1) > 0).all())
