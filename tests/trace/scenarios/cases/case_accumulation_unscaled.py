"""Gradient accumulation over 4 micro-batches without dividing each loss by 4: the .grad the
optimizer reads is 4 times the mean gradient of the 64 examples.

Source: https://discuss.pytorch.org/t/pytorch-gradient-accumulation/55955
The thread asks what ``loss = loss / accumulation_steps`` is for; without it the accumulated
gradient is the sum, not the mean (also https://torchedup.dev/problems/debug-gradient-accumulation).
"""

import torch
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://discuss.pytorch.org/t/pytorch-gradient-accumulation/55955"
DESCRIPTION = "4 micro-batches accumulated, loss not divided by 4: .grad is 4x the batch mean"
ASK = []
MUST = [[r"\b4\b", r"\bfour\b"], [r"pass", r"micro", r"accumulat", r"backward"]]
MUST_NOT = [CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, r"same graph"]


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1))
    x, y = torch.randn(64, 8), torch.randn(64, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with watch(model) as w:
        opt.zero_grad()
        for i in range(4):
            loss = F.mse_loss(model(x[16 * i : 16 * (i + 1)]), y[16 * i : 16 * (i + 1)])
            loss.backward()
        grads = [p.grad.clone() for p in model.parameters()]
        opt.step()
    return Run(w=w, model=model, x=x, y=y, grads=grads)


def truth(run):
    torch.manual_seed(0)
    ref = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1))  # same initial weights
    mean_grads = torch.autograd.grad(F.mse_loss(ref(run.x), run.y), list(ref.parameters()))
    for g, m in zip(run.grads, mean_grads, strict=True):
        assert torch.allclose(g, 4 * m, rtol=1e-4, atol=1e-6)
