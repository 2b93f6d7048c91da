"""A hand-written batch centering, ``h - h.mean(0).detach()``, after a ``Linear`` with a bias: the
mean is treated as a constant in backward.  The forward output does not depend on the bias (the
centering removes any shift), yet the bias gets the gradient it would have without the
centering, the sum of the upstream gradients over the batch, and the optimizer moves it: a step
that changes nothing in the loss.  The gradient through the mean, which would cancel it, is
missing (with the mean kept in the graph the bias's gradient is zero up to rounding), and the
weight's gradient lacks the same term.  Nothing raises; nothing is NaN.

Source: https://blog.aeilot.top/2026/04/07/batch-layer-norm ("If normalization (e.g., centering
the activations to zero mean) is performed outside of the gradient descent step, the optimizer
will remain 'blind' to the normalization's effects"; "Consider a layer that computes x = u + b and
subsequently normalizes it"; "the update Δb is effectively cancelled"; "the optimizer will continue
to increase b in a futile attempt to reach a lower loss").  Adapted: ``Linear(8, 16)`` with bias,
the detached centering, ``Tanh``, ``Linear(16, 1)``, 128 examples, SGD at 0.1.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://blog.aeilot.top/2026/04/07/batch-layer-norm"
DESCRIPTION = "centering h - h.mean(0).detach(): bias gets a gradient, its update changes nothing"
ASK = ["0.bias"]
MUST = [
    [r"bias"],
    [
        r"detach\w*",
        r"\bmean\b",
        r"center\w*",
        r"normali[sz]\w*",
        r"no effect",
        r"does not (change|affect)",
        r"cancel\w*",
        r"invariant",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"all[- ]zero"]


class Center(nn.Module):
    def __init__(self, detach=True):
        super().__init__()
        self.detach = detach

    def forward(self, h):
        mean = h.mean(0)
        return h - (mean.detach() if self.detach else mean)


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(128, 8, generator=g)
    return x, torch.sin(x[:, :1]) + 0.5 * x[:, 1:2]


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), Center(), nn.Tanh(), nn.Linear(16, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = data()
    with watch(model) as w:
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        optimizer.step()
    with torch.no_grad():
        after = F.mse_loss(model(x), y).item()
        moved_bias = model[0].bias.clone()
        model[0].bias.sub_(grads["0.bias"] * -0.1)  # put the bias back where it was
        bias_undone = F.mse_loss(model(x), y).item()
        model[0].bias.copy_(moved_bias)
    model[1].detach = False  # the same model with the mean in the graph
    true_bias_grad = torch.autograd.grad(F.mse_loss(model(x), y), model[0].bias)[0]
    model[1].detach = True
    return Run(w=w, model=model, grads=grads, after=after, bias_undone=bias_undone,
               true_bias_grad=true_bias_grad)  # fmt: skip


def truth(run):
    assert "0.bias" in run.grads
    g = run.grads["0.bias"]
    assert bool(g.abs().sum() > 1e-3)  # the bias gets a real gradient and moves
    assert abs(run.after - run.bias_undone) <= 1e-6 * max(1.0, abs(run.after))  # for nothing
    assert run.true_bias_grad.abs().max() < 1e-3 * g.abs().max()  # the mean's term cancels it
