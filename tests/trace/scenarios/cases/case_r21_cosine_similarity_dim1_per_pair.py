"""Control: the same embedding regressor with ``1 - F.cosine_similarity(pred, target,
dim=1).mean()``: one similarity per example, between its prediction and its own target vector,
averaged over the batch.  The step is ordinary: every gradient is finite and nonzero, every
parameter moves, and the mean per-example similarity rises.

Source: https://runebook.dev/en/docs/pytorch/generated/torch.nn.functional.cosine_similarity ("#
Correct: Calculate similarity across the vector dimension (dim=1)"; "# The output shape will be
(10,) - one similarity score for each pair of vectors in the batch").  Adapted as the bug:
``Linear(10, 32)``, ``Tanh``, ``Linear(32, 8)``, fixed target embeddings of 32 examples, SGD at
0.1.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://runebook.dev/en/docs/pytorch/generated/torch.nn.functional.cosine_similarity"
DESCRIPTION = "control: cosine loss with cosine_similarity(dim=1), one per example: healthy"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"\bdead\b",
    r"dim\s*=\s*1[^\n]{0,40}(wrong|incorrect)",
]


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(32, 10, generator=g)
    target = torch.tanh(x @ torch.randn(10, 8, generator=g))
    return x, target


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 8))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, target = data()
    before = [p.detach().clone() for p in model.parameters()]
    with watch(model) as w:
        optimizer.zero_grad()
        sims = F.cosine_similarity(model(x), target, dim=1)
        loss = 1 - sims.mean()
        loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    with torch.no_grad():
        after = F.cosine_similarity(model(x), target, dim=1).mean()
    return Run(w=w, model=model, sims_shape=tuple(sims.shape), grads=grads, before=before,
               mean_before=sims.mean().item(), mean_after=after.item())  # fmt: skip


def truth(run):
    assert run.sims_shape == (32,)  # one similarity per example
    assert run.mean_after > run.mean_before
    for g, b, p in zip(run.grads, run.before, run.model.parameters(), strict=True):
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
        assert not torch.equal(p.detach(), b)
