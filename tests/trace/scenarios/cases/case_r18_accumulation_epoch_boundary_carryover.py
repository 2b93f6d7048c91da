"""Gradient accumulation counted with the step index of the epoch, ``if (step + 1) %
gradient_accumulation_steps == 0``, when an epoch's number of micro-batches (6) is not a multiple of
the accumulation steps (4). The first epoch steps after its 4th micro-batch; its 5th and 6th
back-propagate into ``.grad`` and are never stepped in that epoch. The counter restarts with the
next epoch, whose first optimizer step comes after its 4th micro-batch: that step applies the sum of
6 micro-batches' gradients, each divided by 4, a gradient 1.5 times the size of the others and made
of two epochs' batches; the second epoch's last two micro-batches are again left in ``.grad``. Two
epochs: 12 backward passes, 2 optimizer steps. Every gradient is finite and nonzero.

Source: https://gitmemories.com/huggingface/transformers/issues/22098 ("[trainer] fix bug in grad
accum with multiple epochs": "we have a bug in grad accum machinery when steps_in_epoch %
gradient_accumulation_steps != 0"; "we always check for step+1 % gradient_accumulation_steps != 0
and when we hit the epoch boundary we end up running more than gradient_accumulation_steps in that
iteration"). Adapted: the Trainer's loop written out, a tanh MLP classifier on micro-batches of 8,
SGD.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://gitmemories.com/huggingface/transformers/issues/22098"
DESCRIPTION = "accumulate 4 by the epoch's step index, 6 per epoch: next epoch's step sums 6"
ASK = []
MUST = [
    [r"accumulat\w*"],
    [
        r"epoch",
        r"boundar\w*",
        r"carr(y|ies|ied)|left ?over|spill\w*",
        r"\b6 (micro-?batch\w*|backward\w*|pass\w*)|\bsix\b",
        r"more than (4|four)|uneven|unequal|1\.5",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE]
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
    stepped = []
    with watch(model) as w:
        for _ in range(2):
            for step_in_epoch, (x, y) in enumerate(epoch):
                loss = F.cross_entropy(model(x), y) / ACCUM
                loss.backward()
                if (step_in_epoch + 1) % ACCUM == 0:
                    stepped.append([p.grad.detach().clone() for p in model.parameters()])
                    optimizer.step()
                    optimizer.zero_grad()
    return Run(w=w, epoch=epoch, stepped=stepped)


def grads_at(model, batches):
    total = None
    for x, y in batches:
        g = torch.autograd.grad(F.cross_entropy(model(x), y) / ACCUM, list(model.parameters()))
        total = list(g) if total is None else [t + u for t, u in zip(total, g, strict=True)]
    return total


def truth(run):
    assert len(run.stepped) == 2
    model = make_model()
    first = grads_at(model, run.epoch[:4])
    for s, e in zip(run.stepped[0], first, strict=True):
        assert torch.allclose(s, e, atol=1e-6)
    with torch.no_grad():
        for p, g in zip(model.parameters(), first, strict=True):
            p -= LR * g
    # the second step: epoch 1's 5th and 6th micro-batches plus epoch 2's first four
    carried = grads_at(model, run.epoch[4:] + run.epoch[:4])
    four = grads_at(model, run.epoch[:4])
    for s, e, f in zip(run.stepped[1], carried, four, strict=True):
        assert torch.allclose(s, e, atol=1e-6)
        assert not torch.allclose(s, f, atol=1e-4)
        assert bool(torch.isfinite(s).all()) and bool(s.abs().sum() > 0)
