"""A GradNorm step: the weighted sum of two task losses is backpropagated with
``retain_graph=True``, then the gradient of the first task's loss with respect to the shared
layer's weight is taken with ``torch.autograd.grad(L1, param.clone(), ...)``.  The clone is a new
tensor that the loss was not computed from: ``autograd.grad`` raises inside the block (after
the backward filled ``.grad``; the optimizer step never runs).

Source: https://github.com/hosseinshn/GradNorm/issues/10 ("G1R = torch.autograd.grad(L1,
param[0].clone(), retain_graph=True, create_graph=True)"; "RuntimeError: One of the
differentiated Tensors appears to not have been used in the graph. Set allow_unused=True if this
is the desired behavior").
"""

import torch
from scenario_kit import FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/hosseinshn/GradNorm/issues/10"
DESCRIPTION = "GradNorm: autograd.grad(L1, shared.weight.clone()) raises: clone not in the graph"
ASK = []
MUST = [
    [r"\braised\b", r"exception", r"\berror\b", r"RuntimeError", r"not (have )?been used"],
    [r"clone", r"not (have )?been used in the graph", r"autograd\.grad", r"allow_unused"],
]
MUST_NOT = [FALSE_OK]


class MTL(nn.Module):
    def __init__(self):
        super().__init__()
        self.shared = nn.Linear(10, 16)
        self.task1 = nn.Linear(16, 1)
        self.task2 = nn.Linear(16, 1)

    def forward(self, x):
        h = torch.relu(self.shared(x))
        return self.task1(h), self.task2(h)


def step(watch):
    torch.manual_seed(0)
    model = MTL()
    weights = torch.ones(2, requires_grad=True)  # GradNorm's task weights
    opt = torch.optim.Adam([*model.parameters(), weights], lr=1e-3)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(16, 10, generator=g)
    y1, y2 = torch.randn(16, 1, generator=g), torch.randn(16, 1, generator=g)
    before = [p.detach().clone() for p in model.parameters()]
    error = None
    try:
        with watch(model) as w:
            opt.zero_grad()
            o1, o2 = model(x)
            L1, L2 = F.mse_loss(o1, y1), F.mse_loss(o2, y2)
            loss = weights[0] * L1 + weights[1] * L2
            loss.backward(retain_graph=True)
            param = list(model.shared.parameters())
            G1R = torch.autograd.grad(L1, param[0].clone(), retain_graph=True, create_graph=True)
            del G1R
            opt.step()
    except RuntimeError as e:
        error = e
    return Run(w=w, model=model, error=error, before=before)


def truth(run):
    assert run.error is not None and "not have been used in the graph" in str(run.error)
    for p, b in zip(run.model.parameters(), run.before, strict=True):
        assert p.grad is not None and bool(p.grad.abs().sum() > 0)  # the backward ran
        assert torch.equal(p.detach(), b)  # the step did not
