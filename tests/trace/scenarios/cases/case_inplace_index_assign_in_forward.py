"""An element of an intermediate tensor is assigned in place inside the forward after a layer
saved it for its backward: the backward raises "modified by an inplace operation".

Source: https://www.yongfengli.tk/2018/04/13/inplace-operation-in-pytorch.html
(``b[i] = b[i] + 1 #inpalce operation`` after ``torch.mm(self.param, b)`` needs ``b``).
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn

SOURCE = "https://www.yongfengli.tk/2018/04/13/inplace-operation-in-pytorch.html"
DESCRIPTION = "b[0] = b[0] + 1 in forward after lin2 saved b: backward raises"
ASK = ["lin.weight"]
MUST = [[r"in-?place", r"modified", r"version"]]
MUST_NOT = [FALSE_OK, r"call backward\(\) before optimizer\.step"]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(6, 6)
        self.lin2 = nn.Linear(6, 6)

    def forward(self, a):
        b = self.lin(a)
        y = self.lin2(b)  # saves b for lin2.weight's gradient
        b[0] = b[0] + 1  # in place on b
        return y + b


def step(watch):
    torch.manual_seed(0)
    model = Net()
    x = torch.randn(4, 6)
    error = None
    try:
        with watch(model) as w:
            model(x).sum().backward()
    except RuntimeError as e:
        error = e
    return Run(w=w, model=model, error=error)


def truth(run):
    assert run.error is not None and "inplace operation" in str(run.error)
    assert run.model.lin2.weight.grad is None
