"""Gradient descent written by hand on a small regression model, the update done as the kata's
solution sketch says, ``w = w - lr * grad``: ``for p in model.parameters(): p = p - lr * p.grad``
under ``torch.no_grad()``.  The assignment rebinds the loop variable to a new tensor and leaves the
parameter as it was: two iterations, gradients computed and zeroed, no weight ever changes.

Source: https://mlkatas.com/kata/23 ("Manual Gradient Descent Step ... Compute the gradient with
.backward(), then update w using w = w - lr * grad. Reset gradients before the next step").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn

SOURCE = "https://mlkatas.com/kata/23"
DESCRIPTION = "manual SGD `p = p - lr * p.grad` in a loop over parameters: rebinds, nothing moves"
ASK = []
MUST = [
    [
        (
            r"(did not|didn't|never|not) (move|change)|unchanged|not (been )?updated|no (optimizer|update)"
            r"|moved nothing|changed none|no parameter (moved|changed)"
        ),
    ]
]
MUST_NOT = [FALSE_OK]


def step(watch, mode: str = "rebind"):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
    g = torch.Generator().manual_seed(1)
    x = torch.randn(32, 3, generator=g)
    y = x @ torch.tensor([[1.0], [-2.0], [0.5]]) + 0.1 * torch.randn(32, 1, generator=g)
    lr = 0.1
    before = [p.detach().clone() for p in model.parameters()]
    ptrs = [p.data_ptr() for p in model.parameters()]
    with watch(model) as w:
        for _ in range(2):
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            with torch.no_grad():
                for p in model.parameters():
                    if mode == "rebind":
                        p = p - lr * p.grad  # the bug: a new tensor, p untouched
                    elif mode == "inplace":
                        p -= lr * p.grad
            if mode == "data":
                for p in model.parameters():
                    p.data = p.data - lr * p.grad.data
                    p.grad.data.zero_()
            else:
                for p in model.parameters():
                    p.grad.zero_()
    return Run(w=w, model=model, before=before, ptrs=ptrs)


def truth(run):
    assert all(
        torch.equal(p.detach(), b) for p, b in zip(run.model.parameters(), run.before, strict=True)
    )
