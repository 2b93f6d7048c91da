"""A healthy step the asker suspected: a linear network without biases or activations (2 inputs, 2
hidden units, 1 output) for a regression whose two inputs are the same feature split in proportions
``a`` and ``1 - a`` (``x1 = a x``, ``x2 = (1 - a) x``). The asker reasoned that the two hidden
units' weights on ``x1`` get the same gradient (and so stay equal); they do not: each hidden unit's
gradient is scaled by its own outgoing weight, ``dC/dW1 = (r W2)^T X`` with ``r`` the scaled
residuals, as the answer says. Because the inputs are collinear, each row of that gradient is
proportional to ``(a, 1 - a)``: nothing is wrong with it. Every gradient is finite and nonzero.

Source: https://datascience.stackexchange.com/questions/120163/are-some-weight-gradients-equal ("The
feature vector x is divided into x1, x2 where x1 = ax, x2 = (1-a)x"; "isn't dC/dw111 = ... =
dC/dw211, and so, isn't w111 = w211, and w121 = w221?"; the answer: "The problem was that dy'/dw111
≠ dz_a1/dw111, but dy'/dw111 = dz_b/dw111, where z_b is the sum of the products of all the z-vectors
of the last layer with the weights"). Adapted: the question's 6 weights as ``Linear(2, 2,
bias=False)`` and ``Linear(2, 1, bias=False)``, a = 0.3, 32 examples of ``y = 3x`` plus noise, MSE,
SGD at 0.05.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://datascience.stackexchange.com/questions/120163/are-some-weight-gradients-equal"
DESCRIPTION = "healthy: split collinear inputs, 2-2-1 linear net: hidden units' grads differ"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"(identical|same|equal) gradients?",
    r"symmetr\w*",
    r"\bdead\b",
]
A = 0.3


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 2, bias=False), nn.Linear(2, 1, bias=False))
    g = torch.Generator().manual_seed(1)
    x = torch.randn(32, 1, generator=g)
    inputs = torch.cat([A * x, (1 - A) * x], dim=1)
    y = 3 * x + 0.1 * torch.randn(32, 1, generator=g)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    w1, w2 = model[0].weight.detach().clone(), model[1].weight.detach().clone()
    with watch(model) as w:
        optimizer.zero_grad()
        pred = model(inputs)
        F.mse_loss(pred, y).backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    return Run(w=w, model=model, inputs=inputs, y=y, pred=pred.detach(), w1=w1, w2=w2,
               grads=grads)  # fmt: skip


def truth(run):
    g1, g2 = run.grads
    r = 2 * (run.pred - run.y) / len(run.y)  # dC/dy'
    assert torch.allclose(g1, (r @ run.w2).T @ run.inputs, atol=1e-6)  # the chain rule
    assert torch.allclose(g2, r.T @ (run.inputs @ run.w1.T), atol=1e-6)
    assert abs(float(g1[0, 0] - g1[1, 0])) > 1e-2  # dC/dw111 != dC/dw211
    assert torch.allclose(g1[:, 0] * (1 - A), g1[:, 1] * A, atol=1e-6)  # rows along (a, 1 - a)
    for g, p, b in zip(run.grads, run.model.parameters(), (run.w1, run.w2), strict=True):
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
        assert not torch.equal(p.detach(), b)
