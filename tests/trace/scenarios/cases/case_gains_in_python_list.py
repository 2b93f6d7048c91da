"""Per-layer learnable gains kept as nn.Parameter objects in a plain Python list: they feed the
forward and get .grad, but the module never registers them and the optimizer never moves them.

Source: https://runebook.dev/zh/docs/pytorch/generated/torch.nn.parameterlist
("如果你使用普通的 list,PyTorch 的 model.parameters() 识别不到里面的参数 ... 优化器无法自动更新这些参数").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://runebook.dev/zh/docs/pytorch/generated/torch.nn.parameterlist"
DESCRIPTION = "3 gains as nn.Parameter in a plain list: used, get .grad, never optimised"
ASK = []
MUST = [
    [
        r"not (registered|in (the|any) optimizer|held|a (registered )?parameter|part of the model)",
        r"unregistered",
        r"no optimizer",
        r"python list",
        r"ParameterList",
        r"outside the model",
        r"not (among|in) (the )?model'?s? parameters",
    ]
]
MUST_NOT = [FALSE_OK]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(8, 8) for _ in range(3))
        self.gains = [nn.Parameter(torch.ones(8)) for _ in range(3)]  # not an nn.ParameterList
        self.head = nn.Linear(8, 1)

    def forward(self, x):
        for layer, gain in zip(self.layers, self.gains, strict=True):
            x = torch.tanh(layer(x)) * gain
        return self.head(x)


def step(watch):
    torch.manual_seed(0)
    model = Net()
    x, y = torch.randn(32, 8), torch.randn(32, 1)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    with watch(model) as w:
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
    return Run(w=w, model=model, opt=opt)


def truth(run):
    gain = run.model.gains[0]
    assert not any(gain is p for p in run.model.parameters())
    assert not any(gain is p for g in run.opt.param_groups for p in g["params"])
    assert gain.grad is not None and bool(gain.grad.abs().sum() > 0)
    assert torch.equal(gain.detach(), torch.ones(8))
