"""Control: a float16 model trained through float32 master copies of its weights, as the thread's
first answer suggests. The forward and backward run in float16; after the backward each float16
gradient is copied into the ``.grad`` of its float32 master copy, Adam (default ``eps=1e-8``, exact in
float32) steps the master copies, and the float16 weights are overwritten with them
(``p.data.copy_(master)``). The optimizer holds only the master copies: the model's own parameters
move by the copy. Every gradient, weight and loss stays finite; the rows of unused tokens keep
their values.

Source: https://discuss.pytorch.org/t/adam-half-precision-nans/1765 ("do the forward + backward
in half precision, but the optimizer step in float precision. To do this, you might have to clone
your parameters, and cast them to float32 and once forward+backward is over, you copy over the
param .data and .grad into this float32 copy (and call optimizer.step on this float32 copy) and
then copy back"). Adapted: a bag-of-embeddings classifier (50 tokens, 16 dimensions, three
classes) in float16 on CPU, two steps at 1e-3.
"""

import math

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://discuss.pytorch.org/t/adam-half-precision-nans/1765"
DESCRIPTION = "control: float16 model, Adam on float32 master copies copied back: healthy"
ASK = []
MUST = [
    [
        HEALTHY_OK,
        r"(master|float32|fp32)[^\n]{0,60}cop(y|ies|ied)",
        r"cop(y|ies|ied)[^\n]{0,60}(master|float32|fp32)",
    ]
]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"(weights|parameters) (did not|didn't|never) (move|change|update)",
    r"not in (the |any )?optimizer[^\n]{0,60}(never|not be|won't|will not) (be )?(updated|trained)",
]
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
    master = [p.detach().float().clone().requires_grad_(True) for p in model.parameters()]
    optimizer = torch.optim.Adam(master, lr=1e-3)
    data = batches()
    before = model.embed.weight.detach().clone()
    losses, after = [], []
    with watch(model) as w:
        for ids, y in data:
            model.zero_grad()
            loss = F.cross_entropy(model(ids), y)
            loss.backward()
            losses.append(loss.item())
            for p, m in zip(model.parameters(), master, strict=True):
                m.grad = p.grad.detach().float()
            optimizer.step()
            for p, m in zip(model.parameters(), master, strict=True):
                p.data.copy_(m.data)
            after.append(model.embed.weight.detach().clone())
    return Run(
        w=w, model=model, master=master, data=data, losses=losses, before=before, after=after
    )


def truth(run):
    assert run.model.embed.weight.dtype == torch.float16 and run.master[0].dtype == torch.float32
    for p, m in zip(run.model.parameters(), run.master, strict=True):
        assert torch.equal(p.detach(), m.detach().half())  # copied back
        assert bool(torch.isfinite(m).all()) and bool(torch.isfinite(p).all())
    unused = torch.ones(VOCAB, dtype=torch.bool)
    unused[run.data[0][0].unique()] = False
    assert torch.equal(run.after[0][unused], run.before[unused])
    assert not torch.equal(run.after[1], run.before)
    assert all(math.isfinite(loss) for loss in run.losses)
