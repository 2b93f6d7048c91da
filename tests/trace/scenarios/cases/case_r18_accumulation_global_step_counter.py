"""Control: gradient accumulation counted with a global counter of micro-batches that does not
restart with the epoch, the fix of the pull request. Two epochs of 6 micro-batches, accumulated by
4: 12 backward passes and 3 optimizer steps, each on exactly 4 micro-batches' gradients divided by
4 (the second step's window spans the epoch boundary), nothing left in ``.grad`` at the end. Every
gradient is finite and nonzero.

Source: https://gitmemories.com/huggingface/transformers/issues/22098 ("when we hit the epoch
boundary we end up running more than gradient_accumulation_steps in that iteration. I proposed a fix
using a total step counter"). Adapted: the Trainer's loop written out with a total step counter, a
tanh MLP classifier on micro-batches of 8, SGD.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://gitmemories.com/huggingface/transformers/issues/22098"
DESCRIPTION = "control: accumulate 4 by a global micro-batch counter: 3 steps of 4 over 2 epochs"
ASK = []
MUST = [[HEALTHY_OK, r"accumulat\w*[^\n]{0,60}\b(4|four)\b"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"carr(y|ies|ied)|left ?over|spill\w*",
    r"more than (4|four)|uneven|unequal",
]
ACCUM, PER_EPOCH, LR = 4, 6, 0.1


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 3))


def micro_batches():
    g = torch.Generator().manual_seed(1)
    out = []
    for _ in range(PER_EPOCH):
        x = torch.randn(8, 10, generator=g)
        out.append((x, x[:, :3].argmax(1)))
    return out


def step(watch):
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    epoch = micro_batches()
    stepped, total = [], 0
    with watch(model) as w:
        for _ in range(2):
            for x, y in epoch:
                loss = F.cross_entropy(model(x), y) / ACCUM
                loss.backward()
                total += 1
                if total % ACCUM == 0:
                    stepped.append([p.grad.detach().clone() for p in model.parameters()])
                    optimizer.step()
                    optimizer.zero_grad()
    left = [p.grad for p in model.parameters()]
    return Run(w=w, epoch=epoch, stepped=stepped, left=left)


def grads_at(model, batches):
    total = None
    for x, y in batches:
        g = torch.autograd.grad(F.cross_entropy(model(x), y) / ACCUM, list(model.parameters()))
        total = list(g) if total is None else [t + u for t, u in zip(total, g, strict=True)]
    return total


def truth(run):
    assert len(run.stepped) == 3
    stream = run.epoch + run.epoch
    model = make_model()
    for k, grads in enumerate(run.stepped):
        expect = grads_at(model, stream[4 * k : 4 * k + 4])  # exactly four micro-batches
        for s, e in zip(grads, expect, strict=True):
            assert torch.allclose(s, e, atol=1e-6)
            assert bool(torch.isfinite(s).all()) and bool(s.abs().sum() > 0)
        with torch.no_grad():
            for p, g in zip(model.parameters(), expect, strict=True):
                p -= LR * g
    assert all(g is None or not bool(g.abs().sum() > 0) for g in run.left)  # nothing left over
