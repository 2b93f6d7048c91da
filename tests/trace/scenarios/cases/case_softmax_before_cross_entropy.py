"""Control: softmax applied before CrossEntropyLoss; the gradients themselves are all fine.

Source: https://discuss.pytorch.org/t/cross-entropy-loss-is-not-decreasing/43814/16
Solution 1 of the thread: "Check if you pass the softmax into the CrossEntropy loss".  The
double softmax makes learning slow, but every parameter gets a finite, nonzero gradient: there
is nothing wrong with the gradient flow to report.
"""

import torch
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://discuss.pytorch.org/t/cross-entropy-loss-is-not-decreasing/43814/16"
DESCRIPTION = "control: softmax fed to cross_entropy; gradients finite and nonzero everywhere"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, CLAIMS_NO_ZERO_GRAD, r"no gradient", r"\bdead\b"]


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 10), nn.Softmax(dim=1))
    x, y = torch.randn(64, 10), torch.randint(0, 10, (64,))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    with watch(model) as w:
        opt.zero_grad()
        probs = model(x)
        loss = F.cross_entropy(probs, y)
        loss.backward()
        opt.step()
    return Run(w=w, model=model, probs=probs.detach())


def truth(run):
    assert torch.allclose(run.probs.sum(1), torch.ones(64))  # softmax, then softmax again in CE
    for p in run.model.parameters():
        assert p.grad is not None and bool(torch.isfinite(p.grad).all())
        assert bool(p.grad.abs().sum() > 0)
