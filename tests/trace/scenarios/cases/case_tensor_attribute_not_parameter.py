"""A weight stored as a plain tensor with requires_grad=True instead of an nn.Parameter: it is
used in the forward and gets .grad, but it is not a parameter of the model; the optimizer never
updates it.

Source: https://runebook.dev/zh/docs/pytorch/generated/torch.nn.parameter.parameter
("PyTorch nn.Parameter 疑难解答:为什么我的参数没有更新?" -- ``self.not_a_param =
torch.randn(size, requires_grad=True)`` "只是一个普通的张量,不会被优化器发现").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://runebook.dev/zh/docs/pytorch/generated/torch.nn.parameter.parameter"
DESCRIPTION = "scale kept as a requires_grad tensor, not nn.Parameter: gets .grad, never moves"
ASK = []
MUST = [
    [
        r"not (registered|in (the|any) optimizer|held|a (registered )?parameter|part of the model)",
        r"unregistered",
        r"no optimizer",
        r"requires.grad[^\n]*(tensor|not a parameter)",
        r"not (among|in) (the )?model'?s? parameters",
    ]
]
MUST_NOT = [FALSE_OK]


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(5, 5)
        self.not_a_param = torch.randn(5, requires_grad=True)

    def forward(self, x):
        return self.lin(x) * self.not_a_param


def step(watch):
    torch.manual_seed(0)
    model = Scaled()
    x, y = torch.randn(16, 5), torch.randn(16, 5)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    before = model.not_a_param.detach().clone()
    with watch(model) as w:
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
    return Run(w=w, model=model, opt=opt, before=before)


def truth(run):
    t = run.model.not_a_param
    assert not any(t is p for p in run.model.parameters())
    assert t.grad is not None and bool(t.grad.abs().sum() > 0)
    assert torch.equal(t.detach(), run.before)
