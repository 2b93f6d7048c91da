"""A healthy step people suspect: per-layer scales appended to an ``nn.ParameterList`` as plain
tensors, ``self.scales.append(torch.ones(16))``.  A page warns that such a tensor is not registered
as a trainable parameter; in torch 2.13 ``ParameterList`` wraps whatever tensor it is given in an
``nn.Parameter`` (``requires_grad=True``), registers it under its index, so the scales are in
``model.parameters()``, in the optimizer, get a gradient and move with the step.  Every gradient is
finite and nonzero.

Source: https://runebook.dev/zh/docs/pytorch/generated/torch.nn.parameterlist/torch.nn.ParameterList.append
("错误 直接将 torch.Tensor 添加到 ParameterList 中。如果直接 append() 一个普通的 torch.Tensor,这个 Tensor
不会 被模型注册为可训练参数"; its example ``self.param_list.append(new_tensor)  # 这是一个普通 Tensor``).
Adapted: three tanh layers in an ``nn.ModuleList``, one appended scale each, SGD.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://runebook.dev/zh/docs/pytorch/generated/torch.nn.parameterlist/"
    "torch.nn.ParameterList.append"
)
DESCRIPTION = "healthy: plain tensors appended to nn.ParameterList are wrapped, registered, trained"
ASK = ["scales.0"]
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"not registered|unregistered",
    r"not in (the |any )?optimizer",
    r"no gradient",
    r"all-zero",
    r"python list",
]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(8, 16), nn.Linear(16, 16), nn.Linear(16, 16)])
        self.scales = nn.ParameterList()
        for _ in range(3):
            self.scales.append(torch.ones(16))  # a plain tensor
        self.head = nn.Linear(16, 1)

    def forward(self, x):
        for layer, scale in zip(self.layers, self.scales, strict=True):
            x = torch.tanh(layer(x)) * scale
        return self.head(x)


def step(watch):
    torch.manual_seed(0)
    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(64, 8, generator=g), torch.randn(64, 1, generator=g)
    before = [s.detach().clone() for s in model.scales]
    with watch(model) as w:
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    in_optimizer = {id(p) for group in optimizer.param_groups for p in group["params"]}
    return Run(
        w=w,
        model=model,
        grads=grads,
        before=before,
        in_optimizer=[id(s) in in_optimizer for s in model.scales],
    )


def truth(run):
    names = [n for n, _ in run.model.named_parameters()]
    for i, s in enumerate(run.model.scales):
        assert isinstance(s, nn.Parameter) and s.requires_grad
        assert f"scales.{i}" in names
        assert not torch.equal(s.detach(), run.before[i])  # moved with the step
    assert all(run.in_optimizer)
    for n, g in run.grads.items():
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0), n
