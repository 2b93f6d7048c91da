"""A model converted with ``model.half()`` and trained with ``torch.optim.Adam`` at its default
``eps=1e-8``. In float16 the smallest positive number is about 6e-8: Adam's denominator
``sqrt(v_hat) + eps`` is computed in the parameter's dtype, so ``eps`` rounds to 0. Every entry whose
gradient is exactly zero (here the embedding rows of the 25 tokens absent from the first batch) has
``m = v = 0`` and gets the update ``0 / 0 = NaN``; entries whose squared gradient underflows get
``m / 0``. The first step's gradients are all finite; the step writes NaN into the embedding, and
the second batch, which uses those tokens, gives a NaN loss.

Source: https://discuss.pytorch.org/t/adam-half-precision-nans/1765 ("I've been running into the
sudden appearance of NaNs when I attempt to train using Adam and Half (float16) precision"; "It's
probably a 0 division somewhere. Have you tried using a much larger eps (say 1e-4)? The default
1e-8 is rounded to 0 in half precision"). Adapted: a bag-of-embeddings classifier (50 tokens, 16
dimensions, three classes) in float16 on CPU, two Adam steps at 1e-3; the first batch draws its
tokens from the first 25 only.
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://discuss.pytorch.org/t/adam-half-precision-nans/1765"
DESCRIPTION = "model.half() + Adam(eps=1e-8): eps rounds to 0 in float16, 0/0 NaN in the update"
ASK = []
MUST = [
    [r"\bnan\b", r"non-?finite"],
    [
        r"\beps\w*",
        r"epsilon",
        r"(float16|fp16|half)[^\n]{0,80}(adam|optimi[sz]er|update|step)",
        r"(adam|optimi[sz]er|update|step)[^\n]{0,80}(float16|fp16|half)",
        r"divi\w* by zero|0\s*/\s*0",
    ],
]
MUST_NOT = [FALSE_OK, r"(input|data|batch)[^\n]{0,30}(contains?|holds?|has) (nan|non-?finite)"]
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


def step(watch, eps=1e-8):
    torch.manual_seed(0)
    model = Bag().half()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, eps=eps)
    data = batches()
    losses, grads, after = [], [], []
    with watch(model) as w:
        for ids, y in data:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(ids), y)
            loss.backward()
            losses.append(loss.item())
            grads.append([p.grad.detach().clone() for p in model.parameters()])
            optimizer.step()
            after.append(model.embed.weight.detach().clone())
    return Run(w=w, model=model, data=data, losses=losses, grads=grads, after=after, eps=eps)


def truth(run):
    assert run.model.embed.weight.dtype == torch.float16
    assert float(torch.tensor(run.eps, dtype=torch.float16)) == 0.0  # eps rounds to zero
    assert all(bool(torch.isfinite(g).all()) for g in run.grads[0])  # first gradients finite
    unused = torch.ones(VOCAB, dtype=torch.bool)
    unused[run.data[0][0].unique()] = False
    assert int(unused.sum()) >= 20
    nan_rows = torch.isnan(run.after[0]).any(1)
    assert bool(nan_rows[unused].all())  # 0 / 0 in every untouched row
    assert run.losses[0] == run.losses[0]
    assert run.losses[1] != run.losses[1]  # the second batch reads the NaN rows
