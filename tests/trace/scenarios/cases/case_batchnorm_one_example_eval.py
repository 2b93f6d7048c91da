"""Control: fine-tuning with a batch of one example in eval mode (BatchNorm uses its running
statistics).  About half of the ReLU units are 0 for that single example, which says nothing
about dead units: one example is no support for "dead for every example".

Source: https://discuss.pytorch.org/t/batch-norm-training-when-batch-size-1/102979
("The batch statistics might be noise with a single sample or your model might even raise an
error").
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://discuss.pytorch.org/t/batch-norm-training-when-batch-size-1/102979"
DESCRIPTION = "control: eval-mode BN, batch of 1; ~half ReLU units 0 on it: no dead-unit fact"
ASK = []
MUST = [[HEALTHY_OK, r"(one|1|single) example", r"batch of (one|1)", r"this batch"]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    r"\bdead\b(?![^\n]*(one example|1 example|single example|this batch|batch of (one|1)))",
]


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, 3))
    model.eval()
    x, y = torch.randn(1, 8), torch.tensor([1])
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with watch(model) as w:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    return Run(w=w, model=model, x=x)


def truth(run):
    m = run.model
    with torch.no_grad():
        h = m[2](m[1](m[0](run.x)))
    assert h.shape[0] == 1
    zero = int((h == 0).sum())
    assert 16 <= zero <= 48  # about half, on a single example
    assert m[0].weight.grad is not None and bool(torch.isfinite(m[0].weight.grad).all())
