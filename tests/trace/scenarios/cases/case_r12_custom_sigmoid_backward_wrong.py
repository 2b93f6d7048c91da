"""A network whose hidden activation is a custom sigmoid written as a ``torch.autograd.Function``
whose ``backward`` returns ``grad_output * s`` instead of ``grad_output * s * (1 - s)``: the
derivative's ``(1 - s)`` factor is missing.  The forward is right and training runs, but every
gradient below the activation (``fc1.weight``, ``fc1.bias``) is wrong: it differs from the one
``torch.sigmoid`` gives on the same weights by far more than rounding, and
``torch.autograd.gradcheck`` on the Function fails against finite differences.  ``fc2``, above the
activation, gets its right gradient.  Every gradient is finite and nonzero; nothing raises.

Source: https://github.com/pm2550/csen-342-wi26 ("Tutorial 3-3: Trust but Verify - Gradient
Checking ... Build a Custom Op: Implement a custom Sigmoid activation function by subclassing
``torch.autograd.Function``.  Introduce a Bug: We will intentionally make a mistake in the
derivative calculation.  Verify with ``gradcheck``"; "Even if your model trains, the gradients
might be slightly wrong").  Adapted: the mistake chosen is the missing ``(1 - s)`` factor.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://github.com/pm2550/csen-342-wi26"
DESCRIPTION = "custom sigmoid Function, backward grad * s (missing (1 - s)): fc1 gradient wrong"
ASK = ["fc1.weight"]
MUST = [
    [
        r"MySigmoid",
        r"custom (autograd\.)?Function",
        r"autograd\.Function",
        r"(its|own|custom|Function's) backward",
        r"\bsigmoid\b",
    ],
    [
        r"wrong",
        r"incorrect",
        r"(does not|doesn't) match",
        r"mismatch",
        r"disagree",
        r"differ",
        r"finite[- ]difference",
        r"gradcheck",
        r"numerical",
        r"not the derivative",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"no_grad", r"detach", r"dead (units?|relu|neurons?)"]


class MySigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        s = 1 / (1 + torch.exp(-x))
        ctx.save_for_backward(s)
        return s

    @staticmethod
    def backward(ctx, grad_output):
        (s,) = ctx.saved_tensors
        return grad_output * s


class Net(nn.Module):
    def __init__(self, activation):
        super().__init__()
        self.activation = activation
        self.fc1 = nn.Linear(6, 16)
        self.fc2 = nn.Linear(16, 1)

    def forward(self, x):
        return self.fc2(self.activation(self.fc1(x)))


def step(watch, function=MySigmoid):
    torch.manual_seed(0)
    model = Net(function.apply)
    params = dict(model.named_parameters())
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(32, 6, generator=g), torch.randn(32, 1, generator=g)
    model.activation = torch.sigmoid  # the reference gradient, on the same weights
    reference = dict(
        zip(
            params, torch.autograd.grad(F.mse_loss(model(x), y), list(params.values())), strict=True
        )
    )
    model.activation = function.apply
    probe = torch.randn(5, 3, dtype=torch.float64, generator=g, requires_grad=True)
    checks = torch.autograd.gradcheck(function.apply, (probe,), raise_exception=False)
    grads = []
    with watch(model) as w:
        for _ in range(2):
            opt.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            grads.append({n: p.grad.detach().clone() for n, p in params.items()})
            opt.step()
    return Run(w=w, grads=grads, reference=reference, gradcheck=checks)


def relative_difference(a, b):
    return ((a - b).norm() / b.norm()).item()


def truth(run):
    assert not run.gradcheck
    first = run.grads[0]
    assert relative_difference(first["fc1.weight"], run.reference["fc1.weight"]) > 0.2
    assert relative_difference(first["fc2.weight"], run.reference["fc2.weight"]) < 1e-5
    for grads in run.grads:
        for n, gr in grads.items():
            assert bool(torch.isfinite(gr).all()) and bool(gr.abs().sum() > 0), n
