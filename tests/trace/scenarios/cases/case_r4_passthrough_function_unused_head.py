"""Both branches of the model go through a custom ``autograd.Function`` that passes its inputs
through unchanged (forward returns them, backward returns the incoming gradients).  The loss uses
only the first output; for the second, autograd hands the Function's backward a zero gradient
(materialised grads), and it sends those zeros on: ``b.weight.grad`` is an all-zero tensor
rather than None, though b's output never reached the loss.

Source: https://github.com/pytorch/pytorch/issues/58511 ("b is not used for loss computation
and therefore I'd expect the gradient for the linear layer self.b to stay as None, however, the
gradient is 0").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.autograd import Function

SOURCE = "https://github.com/pytorch/pytorch/issues/58511"
DESCRIPTION = "pass-through Function: b's output unused by the loss, b.weight.grad zeros not None"
ASK = ["b.weight"]
MUST = [
    [r"\bzero"],
    [
        r"not used",
        r"unused",
        r"(did not|does not|doesn't|never) (reach|affect|contribute|feed)",
        r"PassThrough",
        r"custom (autograd )?function",
        r"\bFunction\b",
    ],
]
MUST_NOT = [
    FALSE_OK,
    r"\bb\b[^\n]{0,40}never called",
    r"module 'b'[^\n]{0,40}(not|never) (called|run)",
]


class PassThrough(Function):
    @staticmethod
    def forward(ctx, *inputs):
        return inputs

    @staticmethod
    def backward(ctx, *grad_outputs):
        return grad_outputs


class MyModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 3, bias=False)
        self.b = nn.Linear(4, 3, bias=False)

    def forward(self, x):
        a, b = self.a(x), self.b(x)
        new_a, new_b = PassThrough.apply(a, b)
        return new_a, new_b


def step(watch):
    torch.manual_seed(0)
    model = MyModel()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(1)
    inp = torch.randn(8, 4, generator=g)
    with watch(model) as w:
        opt.zero_grad()
        out = model(inp)
        loss = out[0].pow(2).sum()
        loss.backward()
        opt.step()
    return Run(w=w, model=model)


def truth(run):
    a, b = run.model.a.weight, run.model.b.weight
    assert a.grad is not None and bool(a.grad.abs().sum() > 0)
    assert b.grad is not None and bool((b.grad == 0).all())  # zeros, not None
