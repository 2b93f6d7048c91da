"""Control: gradient accumulation done right, each of 4 micro-batch losses divided by 4; the
.grad the optimizer reads is the mean gradient of the 64 examples.

Source: https://discuss.pytorch.org/t/pytorch-gradient-accumulation/55955
(the recipe quoted in the question, with ``loss = loss / accumulation_steps``).
"""

import torch
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://discuss.pytorch.org/t/pytorch-gradient-accumulation/55955"
DESCRIPTION = "control: 4 micro-batches, each loss / 4; .grad equals the full-batch mean"
ASK = []
MUST = [[r"\b4\b", r"\bfour\b"]]
MUST_NOT = [CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, r"same graph", r"differ"]


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1))
    x, y = torch.randn(64, 8), torch.randn(64, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with watch(model) as w:
        opt.zero_grad()
        for i in range(4):
            loss = F.mse_loss(model(x[16 * i : 16 * (i + 1)]), y[16 * i : 16 * (i + 1)]) / 4
            loss.backward()
        grads = [p.grad.clone() for p in model.parameters()]
        opt.step()
    return Run(w=w, model=model, x=x, y=y, grads=grads)


def truth(run):
    torch.manual_seed(0)
    ref = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1))
    mean_grads = torch.autograd.grad(F.mse_loss(ref(run.x), run.y), list(ref.parameters()))
    for g, m in zip(run.grads, mean_grads, strict=True):
        assert torch.allclose(g, m, rtol=1e-4, atol=1e-7)
