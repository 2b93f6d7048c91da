"""torch.log applied in the model's forward to a Linear's output, which is negative for about
half its entries: the forward makes NaN, the loss is NaN, every gradient is NaN, and the
optimizer step writes NaN into every parameter.

Source: https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1 (forum thread "How to Solve
the Loss Becoming NaN Due to Using torch.log()": "I encountered a nan loss issue after
introducing a torch.log(t) operation in the forward pass" ... "This is very likely because the
input is a negative number" ... "eps = 1e-7; t = F.relu(t); t = torch.log(t + eps)").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = (
    "https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1 "
    "(forum thread 'How to Solve the Loss Becoming NaN Due to Using torch.log()')"
)
DESCRIPTION = "torch.log of a Linear's output in forward: NaN from the forward on, NaN params"
ASK = []
MUST = [[r"\bnan\b", r"non-?finite"], [r"forward", r"\blog\b"]]
MUST_NOT = [FALSE_OK]


class Net(nn.Module):
    def __init__(self, relu_eps):
        super().__init__()
        self.fc = nn.Linear(8, 16)
        self.head = nn.Linear(16, 1)
        self.relu_eps = relu_eps

    def forward(self, x):
        t = self.fc(x)
        if self.relu_eps:
            t = F.relu(t) + 1e-7
        return self.head(torch.log(t))


def step(watch, relu_eps=False):
    torch.manual_seed(0)
    model = Net(relu_eps)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(32, 8, generator=g), torch.randn(32, 1, generator=g)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    with torch.no_grad():
        fc_out = model.fc(x)
    with watch(model) as w:
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        grads = [p.grad.clone() for p in model.parameters()]
        opt.step()
    return Run(w=w, model=model, loss=loss.item(), grads=grads, fc_out=fc_out)


def truth(run):
    assert bool((run.fc_out < 0).any())
    assert run.loss != run.loss  # NaN
    assert all(bool(torch.isnan(g).any()) for g in run.grads)
    assert all(bool(torch.isnan(p).any()) for p in run.model.parameters())
