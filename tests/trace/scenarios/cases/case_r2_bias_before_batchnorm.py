"""Control: a Linear with a bias directly before BatchNorm1d.  BatchNorm subtracts the batch mean,
so the loss does not depend on that bias and its gradient is zero up to rounding (about 1e-9
against 1e-1 for the weight); the user thought their derivation wrong.  Harmless: the step is
fine, the bias is merely redundant.

Source: https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1 (question "Bias Gradient of
Layer Before Batch Normalization Always Zero": "This implies that my bias change would always be
zero, which doesn't make sense to me").
"""

import torch
from scenario_kit import CLAIMS_NO_ZERO_GRAD, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1 (question 'Bias Gradient of Layer Before Batch Normalization Always Zero')"
DESCRIPTION = "control: Linear bias before BatchNorm1d: its gradient ~0 by construction, harmless"
ASK = []
MUST = [[HEALTHY_OK, r"batch.?norm"]]
MUST_NOT = [
    CLAIMS_NO_ZERO_GRAD,
    CLAIMS_NONFINITE,
    r"vanish",
    r"\bdead\b",
    r"fc\.bias[^\n]{0,40}(no|zero|all-zero) gradient",
]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 16)
        self.bn = nn.BatchNorm1d(16)
        self.act = nn.ReLU()
        self.out = nn.Linear(16, 3)

    def forward(self, x):
        return self.out(self.act(self.bn(self.fc(x))))


def step(watch):
    torch.manual_seed(0)
    model = Net()
    x, y = torch.randn(64, 6), torch.randint(0, 3, (64,))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with watch(model) as w:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        grads = {n: p.grad.clone() for n, p in model.named_parameters()}
        opt.step()
    return Run(w=w, model=model, grads=grads)


def truth(run):
    g = run.grads
    assert float(g["fc.bias"].norm()) < 1e-5 * float(g["fc.weight"].norm())
    assert bool((g["fc.bias"] != 0).any())  # not exactly zero: rounding
    for name, grad in g.items():
        if name != "fc.bias":
            assert bool((grad != 0).any()) and bool(torch.isfinite(grad).all())
