"""A next-token model trained on right-padded sequences with the cross-entropy taken over every
position, padding included: ``F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1))`` with no
``ignore_index`` and no mask. Here 32 of the 72 target positions are the padding token 0, so almost
half of the loss teaches the model to predict padding: the output bias of the padding class gets a
large negative gradient (its logit is pushed up), where a loss over the real tokens only would push
it down (padding is never a real target). Every gradient is finite and nonzero; nothing raises.

Source: https://openillumi.com/?p=108163 ("the phenomenon where the model predominantly predicts
padding tokens (often represented as <blank> or <pad>). This behavior indicates a critical oversight
in the loss calculation process"; "Averaging loss across all tokens, including padding, biases the
model to predict padding"). Adapted: an embedding, a one-layer LSTM and a linear head (in place of
the page's Transformer) over a 12-token vocabulary, 8 sequences of 2 to 10 tokens padded to 10, Adam
at 1e-2.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://openillumi.com/?p=108163"
DESCRIPTION = "token cross-entropy over padded positions too (no mask, no ignore_index)"
ASK = []
MUST = [[r"\bpad", r"ignore_index", r"\bmask"]]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE]
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
        loss = F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1))
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, inputs=inputs, targets=targets, loss=loss.item(), grads=grads)


def truth(run):
    pad = run.targets == PAD
    assert int(pad.sum()) == 32 and pad.numel() == 72  # padding as targets
    torch.manual_seed(0)
    fresh = TokenModel()
    logits = fresh(run.inputs).reshape(-1, V)
    everything = F.cross_entropy(logits, run.targets.reshape(-1))
    real_only = F.cross_entropy(logits, run.targets.reshape(-1), ignore_index=PAD)
    assert abs(run.loss - everything.item()) < 1e-5 and abs(run.loss - real_only.item()) > 1e-3
    assert float(run.grads["head.bias"][PAD]) < -0.3  # the padding logit pushed up
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
