"""A residual unit written with in-place operations, ``x += residual`` on the tensor that the
second convolution took as its input.  ``Conv2d`` saves its input to compute its weight's
gradient; the in-place add bumps that tensor's version counter, so the backward pass reaches
``conv_1``'s node, finds its saved input modified and raises ``RuntimeError: one of the variables
needed for gradient computation has been modified by an inplace operation``.  The optimizer step
never runs: no parameter moves.  The same unit with the sum written onto the block's own output
(the thread's second implementation) trains.

Source: http://discuss.pytorch.org/t/in-place-operation-and-resnet/10724 ("I find that
ResidualUnitA will raise the RuntimeError, but ResidualUnitB won't"; ``residual =
self.conv_1(x)``, ``residual = self.bn_1(residual)``, ``x += residual``; answered: "During
back-propagation, the original value of x is need, but it has been changed in an in-place
operations", "The back-propagation of self.conv_1 needs the original value of x").  Adapted: the
thread's ``ResidualUnitA`` with 8 channels instead of 24, followed by a global average pool and a
``Linear(8, 4)`` head, on 8 random 3x8x8 images with 4 classes, SGD at 0.1.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "http://discuss.pytorch.org/t/in-place-operation-and-resnet/10724"
DESCRIPTION = "residual unit with x += residual on conv_1's input: backward raises (in-place)"
ASK = []
MUST = [
    [r"\braised\b", r"RuntimeError", r"exception", r"\berror\b"],
    [
        r"in-?place",
        r"modified",
        r"\+=",
        r"version( counter)?",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE]


class ResidualUnitA(nn.Module):  # the thread's first implementation, 8 channels
    def __init__(self, c=8):
        super().__init__()
        self.conv_0 = nn.Conv2d(3, c, 3, padding=1, bias=False)
        self.bn_0 = nn.BatchNorm2d(c)
        self.conv_1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn_1 = nn.BatchNorm2d(c)

    def forward(self, x):
        x = self.conv_0(x)
        x = self.bn_0(x)
        x = F.relu(x, inplace=True)
        residual = self.conv_1(x)
        residual = self.bn_1(residual)
        x += residual
        x = F.relu(x, inplace=True)
        return x


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.unit = ResidualUnitA()
        self.head = nn.Linear(8, 4)

    def forward(self, x):
        return self.head(self.unit(x).mean(dim=(2, 3)))


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(8, 3, 8, 8, generator=g)
    return x, torch.randint(0, 4, (8,), generator=g)


def step(watch):
    torch.manual_seed(0)
    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = data()
    before = [p.detach().clone() for p in model.parameters()]
    error = None
    try:
        with watch(model) as w:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
    except RuntimeError as e:
        error = e
    return Run(w=w, model=model, before=before, error=error)


def truth(run):
    assert run.error is not None
    assert "modified by an inplace operation" in str(run.error)
    assert run.model.unit.conv_0.weight.grad is None  # the backward stopped before conv_0
    for p, b in zip(run.model.parameters(), run.before, strict=True):
        assert torch.equal(p.detach(), b)  # the step never ran
