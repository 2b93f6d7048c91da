"""Hidden layers kept in a plain Python list: they run in the forward and get .grad, but they
are not registered, so model.parameters() and the optimizer never see them and they never move.

Source: https://runebook.dev/zh/docs/pytorch/generated/torch.nn.modulelist/torch.nn.ModuleList
("如果您使用标准的 Python list 来存储 nn.Module,这些模块的参数将不会被注册到外部的优化器中,
导致它们在训练时参数不会更新").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://runebook.dev/zh/docs/pytorch/generated/torch.nn.modulelist/torch.nn.ModuleList"
DESCRIPTION = "two hidden Linear layers in a plain list: unregistered, not optimised, never move"
ASK = []
MUST = [
    [
        r"not (registered|in (the|any) optimizer|held|a (registered )?parameter|part of the model)",
        r"unregistered",
        r"no optimizer",
        r"python list",
        r"ModuleList",
        r"outside the model",
        r"not (among|in) (the )?model'?s? parameters",
    ]
]
MUST_NOT = [FALSE_OK]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(8, 16)
        self.hidden = [nn.Linear(16, 16) for _ in range(2)]  # the bug: not an nn.ModuleList
        self.out = nn.Linear(16, 3)

    def forward(self, x):
        x = torch.relu(self.inp(x))
        for layer in self.hidden:
            x = torch.relu(layer(x))
        return self.out(x)


def step(watch):
    torch.manual_seed(0)
    model = Net()
    x, y = torch.randn(32, 8), torch.randint(0, 3, (32,))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    before = model.hidden[0].weight.detach().clone()
    with watch(model) as w:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    return Run(w=w, model=model, opt=opt, before=before)


def truth(run):
    layer = run.model.hidden[0]
    assert not any(layer.weight is p for p in run.model.parameters())
    assert not any(layer.weight is p for g in run.opt.param_groups for p in g["params"])
    assert layer.weight.grad is not None and bool(layer.weight.grad.abs().sum() > 0)
    assert torch.equal(layer.weight.detach(), run.before)
