"""Control: the same float16 bag-of-embeddings classifier trained with Adam at ``eps=1e-4``, which
float16 can represent. The embedding rows of the tokens absent from the first batch have ``m = v =
0`` and get the update ``0 / (0 + 1e-4) = 0``: they stay where they were; the other weights move.
Both losses and every weight stay finite.

Source: https://discuss.pytorch.org/t/adam-half-precision-nans/1765 ("Have you tried using a much
larger eps (say 1e-4)? The default 1e-8 is rounded to 0 in half precision"). Adapted: a
bag-of-embeddings classifier (50 tokens, 16 dimensions, three classes) in float16 on CPU, two Adam
steps at 1e-3; the first batch draws its tokens from the first 25 only.
"""

import math

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://discuss.pytorch.org/t/adam-half-precision-nans/1765"
DESCRIPTION = "control: model.half() with Adam(eps=1e-4): representable eps, every weight finite"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_ERROR]
VOCAB, DIM = 50, 16


class Bag(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.head = nn.Linear(DIM, 3)

    def forward(self, ids):
        return self.head(self.embed(ids).mean(1))


def batches():
    g = torch.Generator().manual_seed(1)
    first = torch.randint(0, VOCAB // 2, (16, 6), generator=g)
    second = torch.randint(0, VOCAB, (16, 6), generator=g)
    return [(ids, ids.sum(1) % 3) for ids in (first, second)]


def step(watch):
    torch.manual_seed(0)
    model = Bag().half()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-4)
    data = batches()
    before = model.embed.weight.detach().clone()
    losses, after = [], []
    with watch(model) as w:
        for ids, y in data:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(ids), y)
            loss.backward()
            losses.append(loss.item())
            optimizer.step()
            after.append(model.embed.weight.detach().clone())
    return Run(w=w, model=model, data=data, losses=losses, before=before, after=after)


def truth(run):
    assert run.model.embed.weight.dtype == torch.float16
    assert float(torch.tensor(1e-4, dtype=torch.float16)) > 0  # representable
    unused = torch.ones(VOCAB, dtype=torch.bool)
    unused[run.data[0][0].unique()] = False
    assert torch.equal(run.after[0][unused], run.before[unused])  # 0 / (0 + eps) = 0
    assert not torch.equal(run.after[0][~unused], run.before[~unused])
    assert all(math.isfinite(loss) for loss in run.losses)
    for p in run.model.parameters():
        assert bool(torch.isfinite(p).all())
