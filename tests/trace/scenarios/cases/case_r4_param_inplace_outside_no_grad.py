"""A learnable per-feature ``scale`` that must stay non-negative is clamped after each optimizer
step with ``model.scale.clamp_(min=0.0)`` -- outside ``torch.no_grad()``.  An in-place operation
on a leaf that requires grad is refused: the clamp raises inside the block, after the step has
already moved the parameters (``scale`` included, below zero where it went).

Source: https://discuss.pytorch.org/t/leaf-variable-was-used-in-an-inplace-operation/308/2
("PyTorch doesn't allow in-place operations on leaf variables that have requires_grad=True (such
as parameters of your model)"; "If you don't intend for the operation to be differentiable, you
can use torch.no_grad").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://discuss.pytorch.org/t/leaf-variable-was-used-in-an-inplace-operation/308/2"
DESCRIPTION = "scale.clamp_(min=0) after opt.step(), outside no_grad: in-place on a leaf raises"
ASK = []
MUST = [
    [r"\braised\b", r"exception", r"\berror\b", r"RuntimeError"],
    [r"leaf", r"in-?place", r"no_grad", r"clamp"],
]
MUST_NOT = [FALSE_OK]


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.full((8,), 0.05))
        self.fc = nn.Linear(8, 1)

    def forward(self, x):
        return self.fc(x * self.scale)


def step(watch, no_grad=False):
    torch.manual_seed(0)
    model = Scaled()
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(32, 8, generator=g)
    y = x @ torch.tensor([1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 1.5, -1.5]).unsqueeze(1)
    before = model.scale.detach().clone()
    error, after_step = None, None
    try:
        with watch(model) as w:
            opt.zero_grad()
            F.mse_loss(model(x), y).backward()
            opt.step()
            after_step = model.scale.detach().clone()
            if no_grad:
                with torch.no_grad():
                    model.scale.clamp_(min=0.0)
            else:
                model.scale.clamp_(min=0.0)
    except RuntimeError as e:
        error = e
    return Run(w=w, model=model, error=error, before=before, after_step=after_step)


def truth(run):
    assert run.error is not None and "leaf Variable" in str(run.error)
    assert not torch.equal(run.after_step, run.before)  # the step ran
    assert bool((run.model.scale.detach() < 0).any())  # the clamp did not
