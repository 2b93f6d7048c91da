"""Control: the same residual unit as the thread's second implementation, ``identity = x``, then
``x = self.conv_1(x)``, ``x = self.bn_1(x)``, ``x += identity``: the in-place add now writes onto
``bn_1``'s output, which no backward formula needs (batch normalization's backward reads its
input and its saved statistics), and the final in-place ReLU's backward reads its own output.
The backward pass completes; every gradient is finite, nonzero and equal to that of the same unit
written without in-place operations, and every parameter moves.

Source: http://discuss.pytorch.org/t/in-place-operation-and-resnet/10724 ("I find that
ResidualUnitA will raise the RuntimeError, but ResidualUnitB won't"; ``identity = x``, ``x =
self.conv_1(x)``, ``x = self.bn_1(x)``, ``x += identity``, ``x = F.relu(x, inplace=True)``).
Adapted as the bug: 8 channels, a global average pool and a ``Linear(8, 4)`` head, 8 random 3x8x8
images, SGD at 0.1.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "http://discuss.pytorch.org/t/in-place-operation-and-resnet/10724"
DESCRIPTION = "control: residual unit adding the identity onto bn_1's output in place: healthy"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"modified by an in-?place",
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"\bdead\b",
]


class ResidualUnitB(nn.Module):  # the thread's second implementation, 8 channels
    def __init__(self, c=8, inplace=True):
        super().__init__()
        self.inplace = inplace
        self.conv_0 = nn.Conv2d(3, c, 3, padding=1, bias=False)
        self.bn_0 = nn.BatchNorm2d(c)
        self.conv_1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn_1 = nn.BatchNorm2d(c)

    def forward(self, x):
        x = self.conv_0(x)
        x = self.bn_0(x)
        x = F.relu(x, inplace=self.inplace)
        identity = x
        x = self.conv_1(x)
        x = self.bn_1(x)
        if self.inplace:
            x += identity
        else:
            x = x + identity
        x = F.relu(x, inplace=self.inplace)
        return x


class Net(nn.Module):
    def __init__(self, inplace=True):
        super().__init__()
        self.unit = ResidualUnitB(inplace=inplace)
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
    error, grads = None, None
    try:
        with watch(model) as w:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            grads = [p.grad.detach().clone() for p in model.parameters()]
            optimizer.step()
    except RuntimeError as e:
        error = e
    return Run(w=w, model=model, before=before, error=error, grads=grads, x=x, y=y)


def truth(run):
    assert run.error is None
    torch.manual_seed(0)
    ref = Net(inplace=False)  # the same initial weights, built the same way
    for r, b in zip(ref.parameters(), run.before, strict=True):
        assert torch.equal(r.detach(), b)
    ref_grads = torch.autograd.grad(F.cross_entropy(ref(run.x), run.y), list(ref.parameters()))
    for g, r, b, p in zip(run.grads, ref_grads, run.before, run.model.parameters(), strict=True):
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
        assert torch.allclose(g, r, atol=1e-6)  # the in-place unit computes the same gradient
        assert not torch.equal(p.detach(), b)
