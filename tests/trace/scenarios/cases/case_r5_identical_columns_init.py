"""A custom layer initialised with one random vector repeated (``torch.randn(out).repeat(in, 1)
.transpose(0, 1)``): every output unit computes the same value, receives the same gradient and
gets the same update, so the units stay identical at every step and the layer is worth one
unit.  Every gradient is finite and nonzero.

Source: https://pages.dogdog.run/machine_learning/weight_initialization.html ("若权重被初始化为相同
的值, 或者更具体的, 被初始化为相同的列, 而所有神经元会一直有相同的输出, 导致神经元失去意义": weights
initialised with identical columns give every neuron the same output for ever; the page prints
three SGD epochs of this layer).
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn

SOURCE = "https://pages.dogdog.run/machine_learning/weight_initialization.html"
DESCRIPTION = "weight with identical columns: all units equal, equal gradients, never diverge"
ASK = []
MUST = [
    [
        r"identical",
        r"symmetr",
        r"(same|equal) (output|value|gradient|update|column|unit)s?",
        r"duplicat",
        r"\bcopies\b",
    ]
]
MUST_NOT = [FALSE_OK]


class Layer(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.w = nn.Parameter(torch.randn(out_features).repeat(in_features, 1).transpose(0, 1))

    def forward(self, x):
        return torch.matmul(x, self.w)


def step(watch):
    torch.manual_seed(0)
    net = nn.Sequential()
    net.add_module("linear", Layer(3, 3))
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    criterion = nn.MSELoss()
    g = torch.Generator().manual_seed(1)
    x = torch.rand(4, 3, generator=g)
    grads = []
    with watch(net) as w:
        for _ in range(2):
            out = net(x)
            opt.zero_grad()
            loss = criterion(out, torch.ones(4, 3))
            loss.backward()
            grads.append(net.linear.w.grad.clone())
            opt.step()
    return Run(w=w, net=net, out=out.detach(), grads=grads)


def truth(run):
    out, wt = run.out, run.net.linear.w.detach()
    assert torch.equal(out, out[:, :1].expand_as(out))  # every unit gives the same output
    assert torch.equal(wt, wt[:, :1].expand_as(wt))  # the columns are still identical
    for grad in run.grads:
        assert torch.equal(grad, grad[:, :1].expand_as(grad))  # same gradient for every unit
        assert bool(torch.isfinite(grad).all()) and bool(grad.abs().sum() > 0)
