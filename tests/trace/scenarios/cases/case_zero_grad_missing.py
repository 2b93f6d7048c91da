"""Two training iterations without zero_grad: the second step reads the sum of both batches'
gradients.

Source: https://theneuralbase.com/pytorch/learn/beginner/optimizer-zero-grad-clearing-old-gradients/
("If you forget to clear them, your model learns from stacked old + new gradients"); the same
mistake behind https://github.com/PaddlePaddle/Paddle/issues/67895.
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://theneuralbase.com/pytorch/learn/beginner/optimizer-zero-grad-clearing-old-gradients/"
)
DESCRIPTION = "no zero_grad between two iterations: second step's .grad = g1 + g2"
ASK = []
MUST = [
    [
        r"zero_grad",
        r"not (been )?(zeroed|reset|cleared)",
        r"accumulat",
        r"\b2 (backward )?passes",
        r"two (backward )?passes",
        r"previous (step|iteration)",
    ]
]
MUST_NOT = [FALSE_OK]


def _net():
    return nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 3))


def step(watch):
    torch.manual_seed(0)
    model = _net()
    batches = [(torch.randn(32, 8), torch.randint(0, 3, (32,))) for _ in range(2)]
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with watch(model) as w:
        for x, y in batches:
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
    return Run(w=w, model=model, batches=batches)


def truth(run):
    torch.manual_seed(0)
    ref = _net()
    opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    (x1, y1), (x2, y2) = run.batches
    g1 = torch.autograd.grad(F.cross_entropy(ref(x1), y1), list(ref.parameters()))
    for p, g in zip(ref.parameters(), g1, strict=True):
        p.grad = g.clone()
    opt.step()
    g2 = torch.autograd.grad(F.cross_entropy(ref(x2), y2), list(ref.parameters()))
    for p, a, b in zip(run.model.parameters(), g1, g2, strict=True):
        assert torch.allclose(p.grad, a + b, rtol=1e-4, atol=1e-6)
        assert not torch.allclose(p.grad, b, rtol=1e-3, atol=1e-6)
