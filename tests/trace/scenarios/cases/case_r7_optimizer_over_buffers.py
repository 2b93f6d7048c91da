"""The optimizer is built over ``model.buffers()`` instead of ``model.parameters()``.  torch 2.13
accepts it (a buffer is a leaf tensor) and steps on it without complaint: the buffer never has a
gradient, so nothing moves, while the model's parameters get their gradients every step and no
optimizer holds them.

Source: https://runebook.dev/en/docs/pytorch/generated/torch.nn.module/torch.nn.Module.buffers
("What happens if you try to optimize a buffer? ... optimizer = torch.optim.SGD(model.buffers(),
lr=0.1)"; the page expects 'an error like "no parameters to optimize"', which torch 2.13 does not
raise for a model that has a buffer).
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://runebook.dev/en/docs/pytorch/generated/torch.nn.module/torch.nn.Module.buffers"
DESCRIPTION = "optimizer built over model.buffers(): parameters get .grad, nothing ever moves"
ASK = ["fc.weight"]
MUST = [
    [r"optimizer"],
    [
        r"not (held|in (the|any) optimizer)",
        r"no optimizer",
        r"(does not|doesn't|did not) hold",
        r"holds? none",
        r"never (moved|updated|stepped)",
        r"did not (move|change)",
        r"not (updated|optimi[sz]ed|stepped)",
        r"buffer",
    ],
]
MUST_NOT = [FALSE_OK]


class MyModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)  # learnable
        self.register_buffer("my_buffer", torch.zeros(1))  # not learnable

    def forward(self, x):
        return self.fc(x) + self.my_buffer


def step(watch):
    torch.manual_seed(0)
    model = MyModel()
    optimizer = torch.optim.SGD(model.buffers(), lr=0.1)  # meant: model.parameters()
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(16, 4, generator=g), torch.randn(16, 1, generator=g)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    with watch(model) as w:
        optimizer.zero_grad()
        F.mse_loss(model(x), y).backward()
        optimizer.step()
    return Run(w=w, model=model, optimizer=optimizer, before=before)


def truth(run):
    held = [p for group in run.optimizer.param_groups for p in group["params"]]
    assert len(held) == 1 and held[0] is run.model.my_buffer
    for n, p in run.model.named_parameters():
        assert p.grad is not None and bool(p.grad.abs().sum() > 0), n
        assert torch.equal(p.detach(), run.before[n]), n  # never moved
