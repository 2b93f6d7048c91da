"""The control of ``sigmoid_output_targets_in_thousands``: the same four patterns and sigmoid
output with the targets scaled into ``[0, 1]`` (divided by 1000), each input feature divided by
its largest value, and the binary cross-entropy in place of the squared error.  With a sigmoid
output and the cross-entropy the gradient with respect to the pre-activation is ``p - t``: no
saturation factor, every target reachable.  Every gradient is finite and nonzero.

Source: https://stats.stackexchange.com/questions/233499/neural-networks-bounded-output ("A trick
for bounded output range is to scale the target values between (0,1) and use sigmoid output +
binary cross-entropy loss. This is often used for image data, where all the pixel values are
between 0 and 255").  Adapted: the bug's network (``Linear(2, 8)``, ``Tanh``, ``Linear(8, 1)``,
``Sigmoid``) and patterns, targets / 1000, features / their maximum, ``nn.BCELoss``, SGD at
0.01, 100 steps before the watched one.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://stats.stackexchange.com/questions/233499/neural-networks-bounded-output"
DESCRIPTION = "control: targets scaled to [0, 1], sigmoid output + BCE: gradient p - t, unsaturated"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"\bdead\b",
    r"saturat\w*",
    r"vanish\w*",
]
X_RAW = torch.tensor([[0.0, 0.0], [0.0, 1.0], [1000.0, 1.0], [1.0, 1.0]])
Y_RAW = torch.tensor([[0.0], [1000.0], [1.0], [0.0]])
X = X_RAW / X_RAW.max(0).values
Y = Y_RAW / 1000
PRE_STEPS = 100


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1), nn.Sigmoid())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(PRE_STEPS):
        optimizer.zero_grad()
        F.binary_cross_entropy(model(X), Y).backward()
        optimizer.step()
    with watch(model) as w:
        optimizer.zero_grad()
        out = model(X)
        out.retain_grad()
        loss = F.binary_cross_entropy(out, Y)
        loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    return Run(w=w, model=model, out=out.detach(), loss=loss.item(), grads=grads)


def truth(run):
    assert float(Y.max()) <= 1.0 and float(Y.min()) >= 0.0  # every target reachable
    p = run.out
    assert float((p * (1 - p)).min()) > 0.05  # nowhere saturated
    for g in run.grads:
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
