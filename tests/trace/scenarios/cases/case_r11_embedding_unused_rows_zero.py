"""Control, a step suspected wrongly: a tiny language model (embedding, one hidden layer, an untied
output layer over 40 tokens) trained on a batch that uses only tokens 0 to 9.  The embedding rows
of the 30 tokens absent from the batch get an exactly zero gradient (a lookup only reaches the
rows it read), while the output layer's rows for those never-target tokens get a nonzero
gradient, ``sum p_i * h`` (the softmax gives them probability, the loss pushes it down).  Both are
what the gradient should be; every parameter gets a finite, nonzero gradient and trains.

Source: https://github.com/jefferyharrell/Workshop ("Stamp 05: Gradient by Hand.  Question: Is
PyTorch computing the gradient correctly, or is something wrong with our setup?"; "For a dead
token i (never the target): dL/dW_i = p_i * h").
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/jefferyharrell/Workshop"
DESCRIPTION = "control: tiny LM, batch uses tokens 0-9 of 40: unused embedding rows get zero grad"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"dead (units?|relu|neurons?)",
    r"^summary:[^\n]*all-zero",
    r"emb\.weight[^\n]{0,60}(no gradient|\bNone\b|all-zero)",
    r"head\.weight[^\n]{0,60}(no gradient|\bNone\b|all-zero)",
]
VOCAB, USED = 40, 10


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, 16)
        self.hidden = nn.Sequential(nn.Linear(16, 32), nn.Tanh())
        self.head = nn.Linear(32, VOCAB)

    def forward(self, tokens):
        return self.head(self.hidden(self.emb(tokens)))


def step(watch):
    torch.manual_seed(0)
    model = TinyLM()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    seq = torch.randint(0, USED, (8, 7), generator=g)
    x, y = seq[:, :-1], seq[:, 1:]
    with watch(model) as w:
        opt.zero_grad()
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), y.reshape(-1))
        loss.backward()
        opt.step()
    grads = {n: p.grad for n, p in model.named_parameters()}
    return Run(w=w, grads=grads)


def truth(run):
    emb, head = run.grads["emb.weight"], run.grads["head.weight"]
    assert bool((emb[USED:] == 0).all()) and bool((emb[:USED].abs().sum(1) > 0).all())
    assert bool((head[USED:].abs().sum(1) > 0).all())  # never-target rows: p_i * h, nonzero
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
