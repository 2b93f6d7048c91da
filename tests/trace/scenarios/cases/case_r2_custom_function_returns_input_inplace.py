"""A custom autograd.Function whose forward scales its input in place and returns it as is,
followed in the model's forward by an in-place multiply of its output: PyTorch refuses it in the
forward ("Output 0 of CustomOp is a view and is being modified inplace ... forbidden"), inside
the block, before any backward.

Source: https://github.com/pytorch/pytorch/issues/30454 ("backward not called with custom op":
CustomOp.forward does "x *= 2.0; return x", the model then does "logits *= self.s"; the custom
backward was never called).  On torch 2.x the same code raises in the forward.
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn


class CustomOp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x *= 2.0
        return x

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 2.0


SOURCE = "https://github.com/pytorch/pytorch/issues/30454"
DESCRIPTION = "custom Function returns its input modified in place; x *= s on it raises in forward"
ASK = ["fc.weight"]
MUST = [
    [r"\braised\b", r"RuntimeError", r"exception", r"\berror\b", r"\bfail"],
    [r"in-?place", r"\bview\b", r"CustomOp", r"custom (autograd\.)?Function", r"\bclon"],
]
MUST_NOT = [FALSE_OK, r"fc[^\n]*never called"]


class Net(nn.Module):
    def __init__(self, in_channel=128, out_channel=512, scale=400.0):
        super().__init__()
        self.fc = nn.Linear(in_channel, out_channel)
        self.s = scale

    def forward(self, x):
        x = self.fc(x)
        logits = CustomOp.apply(x)
        logits *= self.s
        return logits


def step(watch):
    torch.manual_seed(0)
    net = Net()
    dummy_x = torch.rand(32, 128)
    error = None
    try:
        with watch(net) as w:
            x = net(dummy_x)
            x.mean().backward()
    except RuntimeError as e:
        error = e
    return Run(w=w, model=net, error=error)


def truth(run):
    assert run.error is not None and "modified inplace" in str(run.error)
    assert all(p.grad is None for p in run.model.parameters())
