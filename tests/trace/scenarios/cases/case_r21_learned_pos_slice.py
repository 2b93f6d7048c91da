"""Control: the same learned position embedding read as the page writes it, ``pos_embed[:T]``,
the first ``T`` rows, one per position, on sequences of the full length 16: every row of
``pos_embed`` gets its own gradient, the model tells positions apart, and every gradient is finite
and nonzero.

Source: https://crackedaicode.com/problems/flax-learned-pos (``return pos_embed[:T]``;
"``pos_embed[:T]`` - slice the first ``T`` rows for the current sequence"; "training one vector
per absolute position").  Adapted as the bug: a torch model with an ``nn.Embedding(20, 16)`` token
table, ``pos_embed`` 16 x 16 (normal 0.02), ``Tanh`` and a per-token ``Linear(16, 4)`` head, 8
sequences, SGD at 0.1; the sequences here have the full length 16 (the bug's have 12), so that
no row is left without a position.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://crackedaicode.com/problems/flax-learned-pos"
DESCRIPTION = "control: learned positions sliced pos_embed[:T], full-length sequences: healthy"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"\bdead\b",
    r"broadcast\w*",
]


class TokenTagger(nn.Module):
    def __init__(self, max_t=16, d=16):
        super().__init__()
        self.tok = nn.Embedding(20, d)
        self.pos_embed = nn.Parameter(0.02 * torch.randn(max_t, d))
        self.head = nn.Linear(d, 4)

    def forward(self, ids):
        t = ids.shape[1]
        return self.head(torch.tanh(self.tok(ids) + self.pos_embed[:t]))


def data(length):
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, 20, (8, length), generator=g)
    labels = (ids + torch.arange(length)) % 4  # depends on the token and its position
    return ids, labels


def step(watch, length=16):
    torch.manual_seed(0)
    model = TokenTagger()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    ids, labels = data(length)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    with watch(model) as w:
        optimizer.zero_grad()
        logits = model(ids)
        loss = F.cross_entropy(logits.reshape(-1, 4), labels.reshape(-1))
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    return Run(w=w, model=model, length=length, ids=ids, before=before, grads=grads)


def truth(run):
    assert run.length == 16
    assert bool((run.grads["pos_embed"].abs().sum(1) > 0).all())  # every row, one per position
    params = dict(run.model.named_parameters())
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        assert not torch.equal(params[n].detach(), run.before[n]), n
    with torch.no_grad():  # positions told apart
        out = run.model(run.ids)
        assert not torch.allclose(run.model(run.ids.flip(1)), out.flip(1), atol=1e-6)
