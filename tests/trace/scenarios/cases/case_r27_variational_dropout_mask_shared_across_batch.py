"""Variational (time-locked) dropout on the embeddings fed to an LSTM, written with the mask shape
``(1, 1, features)`` instead of ``(batch, 1, features)``: the same units are dropped for every time
step, as intended, but also for every sequence of the batch.  The embedding dimensions that draw a 0
are zero for the whole batch: those columns of the embedding table and of the LSTM's
``weight_ih_l0`` get exactly-zero gradients and do not move at this step (here 5 of the 16
dimensions), the rest of the model trains.  Nothing is NaN and nothing raises.

Source: https://tensorflow.google.cn/versions/r2.0/api_docs/python/tf/compat/v1/layers/Dropout?authuser=9
("noise_shape: 1D tensor of type int32 representing the shape of the binary dropout mask that will
be multiplied with the input. For instance, if your inputs have shape (batch_size, timesteps,
features), and you want the dropout mask to be the same for all timesteps, you can use
noise_shape=[batch_size, 1, features]").  Adapted to PyTorch: a ``bernoulli`` mask of shape ``(1, 1,
16)`` at rate 0.5 scaled by 2, on ``Embedding(40, 16)`` outputs of 32 sequences of 12 tokens, an
``LSTM(16, 32)`` and a ``Linear(32, 2)`` head on the last hidden state, SGD at 0.5.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://tensorflow.google.cn/versions/r2.0/api_docs/python/tf/compat/v1/layers/Dropout"
    "?authuser=9"
)
DESCRIPTION = "variational dropout mask (1, 1, F): same units dropped for the whole batch, 0 grads"
ASK = ["embedding.weight", "lstm.weight_ih_l0"]
MUST = [
    [r"dropout", r"\bmask\w*", r"noise_shape", r"bernoulli"],
    [
        r"(same|one|single|shared)[^\n]{0,40}(mask|units?|dimensions?|features?)",
        r"(whole|entire|every|all)[^\n]{0,30}(batch|sequences?|examples?)",
        r"batch (dimension|axis|size)",
        r"\(1, ?1, ?16\)",
        r"\bzero\b",
        r"no gradient",
    ],
]
MUST_NOT = [
    FALSE_OK,
    CLAIMS_NONFINITE,
    r"requires_grad\s*(=|is|was)?\s*False",
    r"not in (the |any )?optimi[sz]er",
]
B, T, V, E, P = 32, 12, 40, 16, 0.5


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(V, E)
        self.lstm = nn.LSTM(E, 32, batch_first=True)
        self.head = nn.Linear(32, 2)

    def forward(self, tokens, mask):
        out, _ = self.lstm(self.embedding(tokens) * mask)
        return self.head(out[:, -1])


def data():
    g = torch.Generator().manual_seed(1)
    tokens = (torch.randperm(B * T, generator=g) % V).view(B, T)  # every token appears
    labels = ((tokens < V // 2).sum(1) > T // 2).long()
    return tokens, labels


def step(watch, mask_shape=(1, 1, E)):
    torch.manual_seed(0)
    model = Classifier()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    tokens, labels = data()
    mask = torch.bernoulli(
        torch.full(mask_shape, 1 - P), generator=torch.Generator().manual_seed(3)
    ) / (1 - P)
    with watch(model) as w:
        optimizer.zero_grad()
        F.cross_entropy(model(tokens, mask), labels).backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, mask=mask, grads=grads)


def truth(run):
    assert run.mask.shape == (1, 1, E)
    dropped = run.mask[0, 0] == 0
    assert 3 <= int(dropped.sum()) <= 13
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
    for name in ("embedding.weight", "lstm.weight_ih_l0"):
        g = run.grads[name]
        assert bool((g[:, dropped] == 0).all()), name
        assert bool((g[:, ~dropped].abs().sum(0) > 0).all()), name
