"""The control of ``sgd_momentum_one_never_decays``: the same regressor, data and learning rate
with ``momentum=0.9``.  The buffer ``buf = 0.9 * buf + grad`` forgets old gradients geometrically
(it is no longer their sum), the steps settle, and after 40 steps the loss is near the lowest it
has reached and far below where it started.  Every gradient is finite and nonzero.

Source: https://wiki.cloudfactory.com/docs/mp-wiki/solvers-optimizers/momentum-sgd ("Momentum
speeds up the SGD optimizer to reach the local minimum quicker"; "a parameter γ ranging between 0
and 1").  Adapted: the bug's ``Linear(6, 16)``, ``Tanh``, ``Linear(16, 1)`` regressor, 128
examples, SGD at 0.01 with ``momentum=0.9``, 40 steps before the watched one.
"""

import torch
from scenario_kit import CLAIMS_ERROR, CLAIMS_NONFINITE, HEALTHY_OK, Run
from torch import nn
from torch.nn import functional as F

SOURCE = "https://wiki.cloudfactory.com/docs/mp-wiki/solvers-optimizers/momentum-sgd"
DESCRIPTION = "control: SGD momentum=0.9: the buffer forgets old gradients, the loss settles"
ASK = []
MUST = [[HEALTHY_OK]]
MUST_NOT = [
    CLAIMS_NONFINITE,
    CLAIMS_ERROR,
    r"all[- ]zero",
    r"\bzero grad\w*",
    r"\bdead\b",
    r"oscillat\w*",
    r"momentum\s*(=|of|is|set to|at)?\s*1(\.0)?\b",
]
STEPS = 40


def data():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(128, 6, generator=g)
    return x, torch.sin(x[:, :1]) + 0.5 * x[:, 1:2]


def step(watch, momentum=0.9):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=momentum)
    x, y = data()
    grad_sums = [torch.zeros_like(p) for p in model.parameters()]
    losses, grads = [], []

    def one_step():
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        for s, p in zip(grad_sums, model.parameters(), strict=True):
            s.add_(p.grad)
        grads[:] = [p.grad.detach().clone() for p in model.parameters()]
        optimizer.step()
        losses.append(loss.item())

    for _ in range(STEPS):
        one_step()
    with watch(model) as w:
        one_step()
    buffers = [optimizer.state[p]["momentum_buffer"].clone() for p in model.parameters()]
    return Run(w=w, model=model, group=dict(optimizer.param_groups[0]), losses=losses,
               grad_sums=grad_sums, buffers=buffers, grads=grads)  # fmt: skip


def truth(run):
    assert run.group["momentum"] == 0.9
    assert not all(
        torch.allclose(b, s, rtol=1e-2) for b, s in zip(run.buffers, run.grad_sums, strict=True)
    )
    assert run.losses[-1] < 0.5 * run.losses[0]
    assert run.losses[-1] < 1.2 * min(run.losses)  # settled near its lowest
    for g in run.grads:
        assert bool(torch.isfinite(g).all()) and bool(g.abs().sum() > 0)
