"""A regressor whose output layer is a sigmoid, trained with the squared error on targets up to
1000 (the question's four patterns: ``0 0 -> 0``, ``0 1 -> 1000``, ``1000 1 -> 1``, ``1 1 ->
0``).  The sigmoid's output lies in ``(0, 1)``: the pattern whose target is 1000 can never be
reached, its error stays above 999 (the mean squared error above ``999^2 / 4``), and the gradient
drives its pre-activation up until the sigmoid saturates, where ``sigmoid'(z) = p (1 - p)`` is
nearly zero (3e-4 after 100 steps): the loss stays near 2.5e5 while the gradient reaching the
network through that output is the error times that factor.  Every gradient is finite; nothing
raises.

Source: http://stackoverflow.com/questions/9048031/neural-network-output-scaling-the-output-range
("The output layer of my neural network (3 layered) is using sigmoid as activation which outputs
only in range [0-1]. However, if I want to train it for outputs that are beyond [0-1], say in
thousands, what should I do?"; "This did not converge for the mentioned training pattern").
Adapted: the question's four patterns, a ``Linear(2, 8)``, ``Tanh``, ``Linear(8, 1)``,
``Sigmoid`` network, MSE, SGD at 0.01, 100 steps before the watched one.
"""

import torch
from scenario_kit import CLAIMS_NONFINITE, FALSE_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "http://stackoverflow.com/questions/9048031/neural-network-output-scaling-the-output-range"
DESCRIPTION = "sigmoid output, targets up to 1000, MSE: target unreachable, sigmoid saturates"
ASK = []
MUST = [
    [r"sigmoid"],
    [
        r"\(0,\s*1\)",
        r"\[0,\s*1\]",
        r"between 0 and 1",
        r"\brange\b",
        r"\b1000\b",
        r"bounded",
        r"(cannot|can't|never) (reach|exceed|output|produce)",
        r"saturat\w*",
        r"(scale|rescale|normali[sz]e) (the )?targets?",
    ],
]
MUST_NOT = [FALSE_OK, CLAIMS_NONFINITE, r"all[- ]zero"]
X = torch.tensor([[0.0, 0.0], [0.0, 1.0], [1000.0, 1.0], [1.0, 1.0]])  # the question's patterns
Y = torch.tensor([[0.0], [1000.0], [1.0], [0.0]])
PRE_STEPS = 100


def step(watch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1), nn.Sigmoid())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(PRE_STEPS):
        optimizer.zero_grad()
        F.mse_loss(model(X), Y).backward()
        optimizer.step()
    with watch(model) as w:
        optimizer.zero_grad()
        out = model(X)
        loss = F.mse_loss(out, Y)
        loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
    return Run(w=w, model=model, out=out.detach(), loss=loss.item(), grads=grads)


def truth(run):
    assert float(run.out.max()) < 1.0 < float(Y.max())  # 1000 is out of the sigmoid's range
    assert run.loss >= 999**2 / 4
    p = run.out[1, 0]  # the pattern whose target is 1000
    assert float(p * (1 - p)) < 1e-3  # saturated: the sigmoid's slope is nearly zero
    for g in run.grads:
        assert bool(torch.isfinite(g).all())
