"""Control: the same next-token model on the same right-padded sequences with the loss masked as the
answer gives it: per-token losses (``reduction='none'``), multiplied by ``mask = targets != pad``,
summed and divided by ``mask.sum()``. It equals ``F.cross_entropy(..., ignore_index=pad)``; the
padding positions contribute nothing, so the padding class is never a target and its output bias
gets a positive gradient (its logit is pushed down). Every parameter gets a finite, nonzero
gradient.

Source: https://example-a.com/answer/66526823 ("You need to mask out the padding"; "Create a mask
saying where the valid tokens are (pseudocode: mask = target != '<pad>')"; "Multiply the loss values
with the mask ... sum the losses at the valid positions"; "Divide the loss_sum by the number of
valid position, i.e., the sum of the mask"). Adapted: an embedding, a one-layer LSTM and a linear
head over a 12-token vocabulary, 8 sequences of 2 to 10 tokens padded to 10, Adam at 1e-2.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://example-a.com/answer/66526823"
DESCRIPTION = "control: token cross-entropy masked to real tokens, divided by mask.sum()"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"pad\w*[^\n]{0,40}(not (masked|ignored|excluded)|in the loss|trained)",
]
V, PAD = 12, 0
LENGTHS = [10, 7, 4, 3, 8, 5, 9, 2]


class TokenModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, 16)
        self.lstm = nn.LSTM(16, 32, batch_first=True)
        self.head = nn.Linear(32, V)

    def forward(self, tokens):
        return self.head(self.lstm(self.emb(tokens))[0])


def batch():
    g = torch.Generator().manual_seed(1)
    tokens = torch.randint(1, V, (len(LENGTHS), 10), generator=g)
    for i, n in enumerate(LENGTHS):
        tokens[i, n:] = PAD
    return tokens[:, :-1], tokens[:, 1:]  # inputs, next-token targets


def step(watch):
    torch.manual_seed(0)
    model = TokenModel()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    inputs, targets = batch()
    with watch(model) as w:
        optimizer.zero_grad()
        logits = model(inputs)
        per_token = F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1), reduction="none")
        mask = (targets != PAD).reshape(-1).float()
        loss = (per_token * mask).sum() / mask.sum()
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, inputs=inputs, targets=targets, loss=loss.item(), grads=grads)


def truth(run):
    torch.manual_seed(0)
    fresh = TokenModel()
    logits = fresh(run.inputs).reshape(-1, V)
    real_only = F.cross_entropy(logits, run.targets.reshape(-1), ignore_index=PAD)
    assert abs(run.loss - real_only.item()) < 1e-5
    assert float(run.grads["head.bias"][PAD]) > 0  # padding is never a target
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
