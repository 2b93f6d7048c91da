"""Control: two ordinary iterations with optimizer.zero_grad() before each backward.

Source: https://theneuralbase.com/pytorch/learn/beginner/optimizer-zero-grad-clearing-old-gradients/
(the corrected loop of the page).
"""

import torch
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://theneuralbase.com/pytorch/learn/beginner/optimizer-zero-grad-clearing-old-gradients/"
)
DESCRIPTION = "control: zero_grad before each of two iterations; .grad = this batch's only"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, r"accumulat", r"\b2 (backward )?passes"]


def _net():
    return nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 3))


def step(watch):
    torch.manual_seed(0)
    model = _net()
    batches = [(torch.randn(32, 8), torch.randint(0, 3, (32,))) for _ in range(2)]
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with watch(model) as w:
        for x, y in batches:
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
    return Run(w=w, model=model, batches=batches)


def truth(run):
    torch.manual_seed(0)
    ref = _net()
    opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    (x1, y1), (x2, y2) = run.batches
    for p, g in zip(
        ref.parameters(),
        torch.autograd.grad(F.cross_entropy(ref(x1), y1), list(ref.parameters())),
        strict=True,
    ):
        p.grad = g
    opt.step()
    g2 = torch.autograd.grad(F.cross_entropy(ref(x2), y2), list(ref.parameters()))
    for p, b in zip(run.model.parameters(), g2, strict=True):
        assert torch.allclose(p.grad, b, rtol=1e-4, atol=1e-6)
