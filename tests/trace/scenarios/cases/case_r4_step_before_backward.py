"""The loop calls ``optimizer.step()`` before ``loss.backward()``: zero_grad, forward, loss,
step, backward.  At each step ``.grad`` is None (just reset by ``zero_grad()``), so the step
skips every parameter; the backward that follows fills ``.grad`` only for the next
``zero_grad()`` to clear it.  Two iterations: the model never moves.

Source: https://theneuralbase.com/pytorch/learn/beginner/forward-pass-loss-backward-step/ ("The
article's sequential order (zero -> forward -> loss -> backward -> step) is correct and will
break if reordered, especially if step comes before backward").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://theneuralbase.com/pytorch/learn/beginner/forward-pass-loss-backward-step/"
DESCRIPTION = "optimizer.step() before loss.backward(): each step sees .grad None, nothing moves"
ASK = []
MUST = [
    [
        r"before (the |its |a )?backward",
        r"step[^\n]{0,40}(before|without|ahead of)",
        r"\border\b",
        r"\bNone\b",
        r"no (\.grad|gradient)",
        r"after the step",
    ],
    [
        r"did(n't| not) (move|change)",
        r"unchanged",
        r"not (moved|changed|updated)",
        r"skip",
        r"nothing",
        r"no effect",
    ],
]
MUST_NOT = [FALSE_OK]


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(1)
    batches = [(torch.randn(16, 4, generator=g), torch.randn(16, 1, generator=g)) for _ in range(2)]
    before = [p.detach().clone() for p in model.parameters()]
    with watch(model) as w:
        for x, y in batches:
            opt.zero_grad()
            output = model(x)
            loss = F.mse_loss(output, y)
            opt.step()
            loss.backward()
    return Run(w=w, model=model, before=before)


def truth(run):
    for p, b in zip(run.model.parameters(), run.before, strict=True):
        assert torch.equal(p.detach(), b)
        assert p.grad is not None and bool(p.grad.abs().sum() > 0)  # left for the next reset
