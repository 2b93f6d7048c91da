"""The mean of a batch's squared errors, ``F.mse_loss(pred, y)`` (``reduction="mean"``, already
divided by the batch size), back-propagated with ``loss.backward(torch.tensor(1 / n))``: the
gradient is divided by the batch size a second time.  Every gradient is 64 times smaller than the
batch-mean gradient the learning rate was chosen for, so the step is 64 times too short.  Every
gradient is finite and nonzero; nothing raises.

Source: https://grindskills.com/mean-or-sum-of-gradients-for-weight-updates-in-sgd/
(``loss.backward(torch.Tensor([1.0/len(training_data)]))``; "note that F.mse_loss uses
reduction="mean" by default"; "rescaling the gradients and using reduction="mean" does not
accomplish the desired result and amounts to a reduction in the learning rate by a factor of
1/n").  Adapted: the rescaled backward applied to one batch of 64 (a 0-dimensional gradient
argument, the shape ``backward`` accepts for a scalar), a ``Linear(6, 16)``, ``Tanh``,
``Linear(16, 1)`` regressor, SGD at 0.1.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://grindskills.com/mean-or-sum-of-gradients-for-weight-updates-in-sgd/"
DESCRIPTION = "mse_loss (mean) then backward(1/n): gradient divided by the batch size twice"
ASK = []
MUST = [
    [
        r"1\s*/\s*(n|64|len)",
        r"(divided|scaled|averaged|normali[sz]ed) (\w+ )?twice",
        r"twice",
        r"double\w*",
        r"\b64\b",
        r"batch size",
        r"too small",
    ],
    [r"backward\(", r"gradient argument", r"grad(ient)?_outputs?", r"reduction", r"\bmean\b"],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"all[- ]zero", r"\bzero grad\w*"]
N = 64


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(N, 6, generator=g)
    return x, torch.sin(x[:, :1]) + 0.5 * x[:, 1:2]


def make():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 1))


def reference(x, y):
    """The batch-mean gradient, from a fresh copy of the same model."""
    model = make()
    F.mse_loss(model(x), y).backward()
    return [p.grad.clone() for p in model.parameters()]


def step(watch, per_sample=False):
    model = make()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = data()
    with watch(model) as w:
        optimizer.zero_grad()
        if per_sample:  # each example's loss, scaled by 1/n: the sum is the batch mean
            for i in range(N):
                F.mse_loss(model(x[i : i + 1]), y[i : i + 1]).backward(torch.tensor(1.0 / N))
        else:
            F.mse_loss(model(x), y).backward(torch.tensor(1.0 / N))
        grads = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    return Run(w=w, grads=grads, reference=reference(x, y))


def truth(run):
    for g, ref in zip(run.grads, run.reference, strict=True):
        assert torch.allclose(g * N, ref, rtol=1e-4, atol=1e-7)  # 64 times too small
        assert bool(g.abs().sum() > 0)
