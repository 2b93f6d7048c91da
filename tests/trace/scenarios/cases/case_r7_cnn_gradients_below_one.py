"""Control: a small convolutional classifier on 28x28 single-channel images, cross-entropy, one
SGD step: every gradient element is below 1 in absolute value, as the user found in every model
he tried and took for a sign that something was off.  The gradient's scale is set by the loss and
the architecture; nothing is vanishing here (the norms at the layers are of one order).

Source: https://forums.fast.ai/t/why-nn-gradients-are-less-than-1/81494 ("I took 3 or 4
different models from the fastbook courses and still can't find gradients (absolute values) more
than 1"; the reply: "There is no reason to test against the number one. The scale of the gradient
gets determined by the architecture and the loss function").  A small CNN stands in for the
thread's resnet18 on MNIST_SAMPLE, random images for the digits.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://forums.fast.ai/t/why-nn-gradients-are-less-than-1/81494"
DESCRIPTION = "control: small CNN + cross-entropy, every |grad| < 1: healthy, not vanishing"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [CLAIMS_NONFINITE, r"vanish", r"too small", r"explod"]


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1, bias=False),
        nn.BatchNorm2d(8),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1, bias=False),
        nn.BatchNorm2d(16),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(16 * 7 * 7, 2),
    )
    g = torch.Generator().manual_seed(1)
    x = torch.rand(32, 1, 28, 28, generator=g)
    y = torch.randint(0, 2, (32,), generator=g)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with watch(model) as w:
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        grads = {n: p.grad.clone() for n, p in model.named_parameters()}
        opt.step()
    return Run(w=w, grads=grads)


def truth(run):
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
        assert float(g.abs().max()) < 1.0, n  # what the thread noticed: no entry reaches 1
